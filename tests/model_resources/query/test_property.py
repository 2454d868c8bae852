"""
The query tool against its oracle (``reference.py``), for random query documents (Hypothesis).

For every document and user: either the tool refuses it with a tool error and the oracle refuses it
too (a hidden field, a model the user may not read), or the tool's rows are exactly the oracle's,
computed in Python from the rows each resource's ``get_queryset`` permits. So no field outside the
exposed ones and no row outside the permitted ones reaches an answer, through any relation. No
document makes a protocol error. Runs on the test database (SQLite); ``test_on_postgresql`` and
``test_on_mariadb`` run this module and test_guard.py again on those databases in a child pytest.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import subprocess
import sys
import time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from django_mcp.test import McpClient
from tests.conftest import in_ci, tcp_open
from tests.querying.sites import site

from .company import make_company, make_users
from .reference import COLUMNS, HIDDEN, RELATIONS, Reference, Refused

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = int(os.environ.get("MCP_QUERY_EXAMPLES", "150"))

TEXT_POOLS = {
    ("region", "name"): ["North", "South", "East", "West", "nor", "th"],
    ("department", "name"): ["Sales", "Support", "Research", "Legal", "Ops", "s", "Re"],
    ("department", "code"): ["D0", "D1", "D2", "D3", "D4", "D9", "D"],
    ("skill", "name"): ["python", "sql", "design", "law", "go", "S", "l"],
    ("employee", "name"): ["E00", "E03", "E07", "E12", "E19", "E23", "E99", "E1", "e0"],
    ("project", "title"): ["P0", "P1", "P3", "P5", "P8", "P9", "p"],
}
NUMBER_POOLS = {
    ("employee", "level"): [0, 1, 2, 3, 4, 6, 7],
    ("employee", "rating"): [1.0, 2.5, 3.3, 4.9],
    ("project", "cost"): ["100.50", "211.50", "285.50", "400"],
    ("assignment", "hours"): [5, 10, 20, 29, 30, 40],
}
DATE_POOLS = {
    ("employee", "hired"): ["2015-01-01", "2018-06-15", "2020-04-04", "2023-12-31"],
    ("project", "started"): ["2020-01-01", "2021-02-01", "2023-06-01"],
}
BOOLEANS = {("employee", "active"), ("project", "confidential")}
DATETIMES = {("assignment", "since"): ["2026-01-05T09:00:00", "2026-03-01T00:00:00", "2026-07-20T12:30:00"]}


def column_kind(model: str, column: str) -> str:
    key = (model, column)
    if column == "id":
        return "id"
    if key in TEXT_POOLS:
        return "text"
    if key in NUMBER_POOLS:
        return "number"
    if key in DATE_POOLS:
        return "date"
    if key in DATETIMES:
        return "datetime"
    return "boolean"


@st.composite
def comparison(draw: Any, model: str) -> dict[str, Any]:
    column = draw(st.sampled_from(COLUMNS[model]))
    kind = column_kind(model, column)
    key = (model, column)
    if kind == "id":
        lookup = draw(st.sampled_from(["", "__in", "__gt", "__lte"]))
        value: Any = draw(st.lists(st.integers(0, 50), min_size=1, max_size=4)) if lookup == "__in" \
            else draw(st.integers(0, 50))
    elif kind == "text":
        pool = TEXT_POOLS[key]
        lookup = draw(st.sampled_from(["", "__iexact", "__icontains", "__contains", "__istartswith", "__endswith",
                                       "__in", "__gte", "__lt"]))
        value = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3)) if lookup == "__in" \
            else draw(st.sampled_from(pool))
    elif kind == "number":
        pool = NUMBER_POOLS[key]
        lookup = draw(st.sampled_from(["", "__gt", "__gte", "__lt", "__lte", "__range", "__in", "__isnull"]))
        if lookup == "__range":
            value = sorted(draw(st.lists(st.sampled_from(pool), min_size=2, max_size=2)), key=float)
        elif lookup == "__in":
            value = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
        elif lookup == "__isnull":
            value = draw(st.booleans())
        else:
            value = draw(st.sampled_from(pool))
    elif kind in ("date", "datetime"):
        pool = DATE_POOLS.get(key) or DATETIMES[key]
        transform = draw(st.sampled_from(["", "__year", "__month", "__quarter", "__week_day"]
                                         + (["__hour", "__date"] if kind == "datetime" else [])))
        lookup = draw(st.sampled_from(["", "__gt", "__lte", "__isnull"] if not transform else ["", "__gte", "__lt"]))
        if lookup == "__isnull":
            value = draw(st.booleans())
        elif transform == "__date":
            value = draw(st.sampled_from(pool))[:10]
        elif transform:
            value = draw(st.integers(0, 2026 if transform == "__year" else 12))
            if transform == "__year":
                value = draw(st.sampled_from([2015, 2018, 2020, 2021, 2023, 2026]))
        else:
            value = draw(st.sampled_from(pool))
        return {f"{column}{transform}{lookup}": value}
    else:
        lookup = draw(st.sampled_from(["", "__isnull"] if key != ("employee", "active") else [""]))
        value = draw(st.booleans())
    return {f"{column}{lookup}": value}


@st.composite
def condition(draw: Any, model: str, depth: int = 0) -> dict[str, Any]:
    """An object of lookups (1 to 3 keys) on ``model``, or an and/or/not of conditions."""
    if depth < 2 and draw(st.integers(0, 5)) == 0:
        combinator = draw(st.sampled_from(["and", "or", "not"]))
        if combinator == "not":
            return {"not": draw(condition(model, depth + 1))}
        return {combinator: draw(st.lists(condition(model, depth + 1), min_size=1, max_size=3))}
    found: dict[str, Any] = {}
    for _ in range(draw(st.integers(1, 3))):
        choice = draw(st.integers(0, 9))
        relations = RELATIONS[model]
        if choice < 5 or depth >= 2 or not relations:
            found.update(draw(comparison(model)))
            continue
        if choice == 9 and model in HIDDEN:
            found[f"{draw(st.sampled_from(HIDDEN[model]))}__isnull"] = False  # refused: not exposed
            continue
        name = draw(st.sampled_from(sorted(relations)))
        target, to_one = relations[name][0], relations[name][1]
        shape = draw(st.integers(0, 3))
        if to_one and shape == 0:
            found[f"{name}__isnull"] = draw(st.booleans())
        elif to_one and shape == 1:
            found[f"{name}__in"] = draw(st.lists(st.integers(1, 30), min_size=1, max_size=3))
        elif not to_one and shape == 0:
            found[f"{name}__isnull"] = draw(st.booleans())
        elif not to_one and shape == 1:
            lookup = draw(st.sampled_from(["", "__gt", "__gte", "__lt", "__lte"]))
            found[f"{name}__count{lookup}"] = draw(st.integers(0, 4))
        else:
            sub = draw(condition(target, depth + 1))
            if set(sub) & {"and", "or", "not"}:
                sub = draw(comparison(target))
            found.update({f"{name}__{key}": value for key, value in sub.items()})
    return found


@st.composite
def column_path(draw: Any, model: str, depth: int = 0, hidden: bool = True) -> str:
    to_one = sorted(name for name, relation in RELATIONS[model].items() if relation[1])
    choice = draw(st.integers(0, 9))
    if choice < 3 and to_one and depth < 2:
        name = draw(st.sampled_from(to_one))
        return f"{name}__{draw(column_path(RELATIONS[model][name][0], depth + 1, hidden))}"
    if choice == 3 and to_one:
        return draw(st.sampled_from(to_one))  # the foreign key's value
    if choice == 4 and hidden and model in HIDDEN and draw(st.integers(0, 3)) == 0:
        return HIDDEN[model][0]  # refused
    column = draw(st.sampled_from(COLUMNS[model]))
    if column_kind(model, column) in ("date", "datetime") and draw(st.booleans()):
        column += draw(st.sampled_from(["__year", "__month"]))
    return column


@st.composite
def documents(draw: Any) -> dict[str, Any]:
    model = draw(st.sampled_from(sorted(COLUMNS)))
    document: dict[str, Any] = {"model": model, "limit": 100}
    if draw(st.booleans()):
        document["filter"] = draw(condition(model))
    if draw(st.integers(0, 4)) == 0:
        document["exclude"] = draw(condition(model))
    if draw(st.booleans()):
        group_by = draw(st.lists(column_path(model), max_size=2, unique=True))
        aggregates: dict[str, Any] = {}
        for index in range(draw(st.integers(1, 2))):
            function = draw(st.sampled_from(["count", "count", "sum", "avg", "min", "max"]))
            spec: dict[str, Any] = {"function": function}
            numeric = [c for c in COLUMNS[model] if column_kind(model, c) in ("id", "number")]
            if function in ("sum", "avg"):
                spec["field"] = draw(st.sampled_from(numeric))
            elif function in ("min", "max") or draw(st.booleans()):
                spec["field"] = draw(column_path(model, hidden=False))
                if function == "count":
                    spec["distinct"] = draw(st.booleans())
            aggregates[f"agg{index}"] = spec
        if group_by:
            document["group_by"] = group_by
        document["aggregates"] = aggregates
        if aggregates["agg0"]["function"] in ("count", "sum", "avg") and draw(st.integers(0, 3)) == 0:
            document["having"] = {f"agg0__{draw(st.sampled_from(['gt', 'gte', 'lt']))}": draw(st.integers(0, 5))}
        names = group_by + list(aggregates)
    else:
        names = draw(st.lists(column_path(model), min_size=1, max_size=4, unique=True))
        document["fields"] = names
        if draw(st.integers(0, 3)) == 0:
            document["distinct"] = True
    if names and draw(st.booleans()):
        document["order_by"] = [("-" if draw(st.booleans()) else "") + draw(st.sampled_from(names))]
    return document


def normal(value: Any) -> Any:
    """A value as both sides may write it: numbers as rounded floats, the rest as JSON text."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float, Decimal)):
        return round(float(value), 4)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return value.replace("+00:00", "Z")
        return round(float(number), 4) if number.is_finite() else value
    return json.dumps(value)


def multiset(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps({key: normal(value) for key, value in row.items()}, sort_keys=True) for row in rows)


@pytest.fixture(scope="module")
def company(django_db_setup: Any, django_db_blocker: Any) -> Any:
    """The company's rows and users, made once for the module and removed after it."""
    with django_db_blocker.unblock():
        from django.core.management import call_command

        make_company()
        users = make_users()
        references = {name: Reference(site, name, user) for name, user in users.items()}
        clients = {}
        for name, user in users.items():
            clients[name] = McpClient(site=site)
            clients[name].force_authenticate(user)
        yield clients, references
        call_command("flush", interactive=False, verbosity=0)


@pytest.mark.django_db(transaction=True)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("MCP_QUERY_RANDOM") != "1",
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(document=documents(), username=st.sampled_from(["boss", "clerk", "guest"]))
def test_answers_match_the_permitted_rows(company: Any, document: dict[str, Any], username: str) -> None:
    clients, references = company
    started = time.monotonic()
    result = clients[username].call_tool("query_models", document)
    elapsed = time.monotonic() - started
    assert elapsed < site.get_tool("query_models").timeout_ms / 1000 + 5
    try:
        expected = references[username].answer(document)
    except Refused as refused:
        event("refused")
        assert result.is_error, f"expected a refusal ({refused}), got {result.text[:300]}"
        assert "internal error" not in result.text
        return
    assert not result.is_error, f"{document}: {result.text}"
    event("answered with rows" if expected else "answered, no rows")
    structured = result.structured
    assert structured["more"] is False and structured["truncated"] is False
    assert multiset(structured["rows"]) == multiset(expected), json.dumps(document)
    order = document.get("order_by")
    if order and all(math.isfinite(0) for _ in order):
        name = order[0].lstrip("-")
        keys = [normal(row[name]) for row in structured["rows"]]
        present = [key for key in keys if key is not None]
        if all(isinstance(key, float) for key in present):
            ordered = sorted(present, reverse=order[0].startswith("-"))
            assert present == ordered, f"{document}: not ordered by {order[0]}"


@pytest.mark.django_db(transaction=True)
@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(document=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                             lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                 st.sampled_from(["model", "filter", "fields", "group_by", "aggregates", "having",
                                                  "order_by", "limit", "distinct", "exclude", "employee",
                                                  "name__in", "department__name", "function", "field", "and",
                                                  "not", "count", "salary", "hours__gt"]), inner, max_size=4),
                             max_leaves=12))
def test_any_document_is_answered_or_refused_cleanly(company: Any, document: Any) -> None:
    """Arbitrary JSON: a tool result every time (an answer or a tool error), never a protocol error."""
    clients, _ = company
    arguments = document if isinstance(document, dict) else {"model": document}
    if isinstance(arguments.get("model"), str) or "model" not in arguments:
        arguments = {**arguments, "model": "employee"}
    result = clients["clerk"].call_tool("query_models", arguments)
    assert result.is_error or result.structured["rows"] is not None
    assert "internal error" not in result.text, arguments


def mariadb_missing() -> str | None:
    """Why the MariaDB run cannot happen here, or None."""
    try:
        import MySQLdb  # noqa: F401
    except ImportError:
        return "mysqlclient is not installed (scripts/install-mysql-driver; needs the MariaDB client headers)"
    if not tcp_open(("127.0.0.1", 3306)):
        return "MariaDB (or MySQL) is not reachable on 127.0.0.1:3306"
    return None


def child_run(database: str, env: dict[str, str], *, skipped: str) -> None:
    """This module and test_guard.py in a child pytest on ``database``; ``skipped``: its last line's count."""
    env = {**os.environ, "MCP_TEST_DATABASE": database, **env,
           "MCP_QUERY_EXAMPLES": str(max(EXAMPLES // 2, 20))}  # the same code paths: fewer examples suffice
    modules = [__file__, str(Path(__file__).with_name("test_guard.py"))]
    finished = subprocess.run([sys.executable, "-m", "pytest", *modules, "-p", "no:xdist", "-p", "no:cacheprovider",
                               "-q", "-x", "-k", "not test_on_"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=900)
    assert finished.returncode == 0, finished.stdout[-6000:] + finished.stderr[-3000:]
    # Only the other databases' tests are skipped there: the cost tests, MariaDB's variables.
    assert skipped in finished.stdout.splitlines()[-1], finished.stdout[-2000:]


@pytest.mark.skipif(os.environ.get("MCP_TEST_DATABASE") is not None, reason="a child run already")
def test_on_postgresql(services: Any) -> None:
    """The same properties and guards on PostgreSQL: this module and test_guard.py in a child pytest."""
    child_run("postgres", {"MCP_TEST_PG_TEST_NAME": f"test_query_{os.getpid()}"}, skipped="2 skipped")


@pytest.mark.skipif(os.environ.get("MCP_TEST_DATABASE") is not None, reason="a child run already")
def test_on_mariadb() -> None:
    """
    The same properties and guards on MariaDB (Django's ``mysql`` backend, mysqlclient): read-only
    transactions, ``max_statement_time``, and answers equal to the oracle's under its case-blind
    collation. Skips without mysqlclient or the server, and fails so under CI=true.
    """
    reason = mariadb_missing()
    if reason:
        if in_ci():
            pytest.fail(f"CI=true but the MariaDB run cannot happen: {reason}", pytrace=False)
        pytest.skip(reason=reason)
    child_run("mariadb", {"MCP_TEST_MARIADB_TEST_NAME": f"test_query_{os.getpid()}"}, skipped="1 skipped")
