"""
The database guard of queries (``guard.py``) on the test database: read-only, a statement timeout,
undone afterwards, and a cost estimate on PostgreSQL. ``test_property.test_on_postgresql`` and
``test_on_mariadb`` run this module on PostgreSQL and MariaDB too.
"""

from __future__ import annotations

import time

import pytest
from django.db import DatabaseError, connection, transaction

from django_mcp.model_resources.query.guard import estimated_cost, guarded, timed_out
from django_mcp.model_resources import ModelQueryTool
from django_mcp.test import McpClient
from tests.querying.models import Region
from tests.querying.slow import SLOW_SQL, slow_site

pytestmark = pytest.mark.django_db(transaction=True)


def test_nothing_is_written_inside_the_guard_and_everything_after_it() -> None:
    with guarded("default", 3000):
        with pytest.raises(DatabaseError):
            Region.objects.create(name="Inside")
    Region.objects.create(name="After")  # read-only and the timeout are undone
    assert list(Region.objects.values_list("name", flat=True)) == ["After"]


def test_inside_a_transaction_already_open_nothing_the_guard_ran_is_kept() -> None:
    # Refused on PostgreSQL and SQLite; on MariaDB, written in a savepoint that is rolled back (a
    # transaction's access mode is fixed when it begins).
    with transaction.atomic():
        try:
            with guarded("default", 3000):
                Region.objects.create(name="Inside")
        except DatabaseError:
            assert connection.vendor != "mysql"
    assert not Region.objects.exists()


def test_a_statement_past_the_timeout_is_stopped() -> None:
    started = time.monotonic()
    with pytest.raises(DatabaseError) as caught:
        with guarded("default", 200), connection.cursor() as cursor:
            cursor.execute(f"SELECT {SLOW_SQL[connection.vendor]}")
            cursor.fetchall()
    assert timed_out(caught.value, "default")
    assert time.monotonic() - started < 5
    with connection.cursor() as cursor:  # the connection serves the next statement
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_a_slow_query_is_a_tool_error_and_the_server_goes_on() -> None:
    Region.objects.create(name="North")
    client = McpClient(site=slow_site)
    started = time.monotonic()
    result = client.call_tool("query_models", {"model": "region"})
    assert result.is_error and result.text.startswith("The query ran longer than 300 ms and was stopped.")
    assert time.monotonic() - started < 5
    assert [tool["name"] for tool in client.list_tools()] == ["query_models"]  # it goes on serving


@pytest.mark.skipif(connection.vendor != "mysql",
                    reason="MariaDB's session variables; test_property.test_on_mariadb runs this module there")
def test_the_session_gets_its_own_statement_limit_back_on_mariadb() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET SESSION max_statement_time = 7")
    try:
        with guarded("default", 300), connection.cursor() as cursor:
            cursor.execute("SELECT @@session.max_statement_time")
            assert cursor.fetchone() == (0.3,)
        with connection.cursor() as cursor:
            cursor.execute("SELECT @@session.max_statement_time")
            assert cursor.fetchone() == (7.0,)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION max_statement_time = 0")


@pytest.mark.skipif(connection.vendor == "postgresql", reason="PostgreSQL estimates costs: the test below")
def test_other_databases_give_no_cost_estimate_so_never_refuse_for_cost() -> None:
    assert estimated_cost(Region.objects.all()) is None


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="EXPLAIN costs are PostgreSQL's; test_property.test_on_postgresql runs this module there")
def test_a_query_above_the_cost_limit_is_refused_on_postgresql() -> None:
    assert estimated_cost(Region.objects.all()) > 0
    from tests.querying.sites import site

    tool = ModelQueryTool(site=site, max_cost=0.01)
    tool.name = "query_cheap"
    site.add(tool)
    try:
        result = McpClient(site=site).call_tool("query_cheap", {"model": "region"})
    finally:
        site.remove_tool("query_cheap")
    assert result.is_error and "above this server's limit of 0" in result.text
