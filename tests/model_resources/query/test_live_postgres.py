"""
The query tool on PostgreSQL behind a real daphne server, asked by the official SDK client in
both eras: each user's answers hold only the rows their querysets permit, through relations,
and a refused query leaves the server serving.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from mcp import Client

from tests.live import ROOT, LiveServer, migrate, server_env

ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"


@pytest.fixture(scope="module")
def server(services: Mapping[str, str]) -> Iterator[LiveServer]:
    """daphne serving tests.querying's site on a database of its own (the company would clash with others' users)."""
    import psycopg
    from psycopg import sql

    name = f"django_mcp_query_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    env = {**services, "MCP_TEST_PG_NAME": name, "MCP_TEST_SITE": "tests.querying.sites.site"}
    try:
        migrate(env)
        subprocess.run([sys.executable, "-m", "tests.querying.setup"], cwd=ROOT, env=server_env(env),
                       capture_output=True, text=True, timeout=120, check=True)
        with LiveServer(env=env, name="querying-postgres") as live:
            yield live
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as connection:
            connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


async def ask(server: LiveServer, user: str, mode: str, document: dict[str, Any]) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"X-Api-Key": f"{user}-key"})
    async with asyncio.timeout(30), http, Client(streamable_http_client(server.mcp_url, http_client=http),
                                                  mode=mode) as client:
        return await client.call_tool("query_models", document)


def rows(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, result.content[0].text
    return result.structured_content["rows"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_each_user_gets_the_rows_their_querysets_permit(server: LiveServer, mode: str) -> None:
    levels = {"model": "employee", "group_by": ["level"], "aggregates": {"people": {"function": "count"}},
              "order_by": ["level"]}
    assert [row["level"] for row in rows(await ask(server, "boss", mode, levels))] == [1, 2, 3, 4, 5, 6]
    assert [row["level"] for row in rows(await ask(server, "clerk", mode, levels))] == [1, 2, 3]
    seniors_skills = {"model": "skill", "filter": {"employees__level__gt": 3}, "fields": ["name"]}
    assert rows(await ask(server, "boss", mode, seniors_skills))
    assert rows(await ask(server, "clerk", mode, seniors_skills)) == []
    hours = {"model": "employee", "filter": {"assignments__count__gt": 0}, "aggregates": {
        "people": {"function": "count"}}}
    busy_for_clerk = rows(await ask(server, "clerk", mode, hours))[0]["people"]
    assert 0 < busy_for_clerk < rows(await ask(server, "boss", mode, hours))[0]["people"]
    confidential = {"model": "assignment", "fields": ["project__title", "project__confidential"], "distinct": True}
    assert not any(row["project__confidential"] for row in rows(await ask(server, "clerk", mode, confidential)))
    assert any(row["project__confidential"] for row in rows(await ask(server, "boss", mode, confidential)))


async def test_refusals_are_tool_errors_and_the_server_goes_on(server: LiveServer) -> None:
    refused = await ask(server, "clerk", "2026-07-28", {"model": "employee", "fields": ["department__name"]})
    assert refused.is_error and refused.content[0].text == ("You may not read department rows, so this query "
                                                            "cannot use them.")
    hidden = await ask(server, "boss", "2026-07-28", {"model": "employee", "aggregates": {
        "payroll": {"function": "sum", "field": "salary"}}})
    assert hidden.is_error and "field 'salary' is not exposed on employee" in hidden.content[0].text
    wrong = await ask(server, "boss", "2026-07-28", {"model": "employee", "filter": {"hired__gte": "yesterday"}})
    assert wrong.is_error and "hired__gte" in wrong.content[0].text
    assert rows(await ask(server, "guest", "legacy", {"model": "region", "fields": ["name"], "order_by": ["name"]})) \
        == [{"name": "East"}, {"name": "North"}, {"name": "South"}]
