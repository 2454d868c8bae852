"""
django_mcp's core app with no feature app installed (tests/core_only): it migrates only the core's
tables, passes its system checks, and serves tools, resources and prompts defined in code over
every transport: Streamable HTTP in both eras and HTTP+SSE (a real daphne, the official ``mcp``
SDK client) and stdio (``python -m django_mcp.stdio`` on real pipes). Every tool is enabled: no
tool admin stands between the code and the client.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator, Mapping

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client

from tests.live import ROOT, LiveServer, migrate, server_env
from tests.transports.stdio_driver import StdioProcess, modern, request


SETTINGS = "tests.core_only.settings"
TIMEOUT = 30


@pytest.fixture(scope="module")
def core_env(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
    env = {"DJANGO_SETTINGS_MODULE": SETTINGS, "MCP_TEST_DATABASE": "sqlite",
           "MCP_TEST_SQLITE": str(tmp_path_factory.mktemp("core-only") / "db.sqlite3"),
           "MCP_TEST_CHANNEL_LAYER": "memory", "DJANGO_MCP_USER": None}
    migrate(env)
    return {key: value for key, value in env.items() if value is not None}


@pytest.fixture(scope="module")
def core_server(core_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with LiveServer(env=core_env, name="core-only") as server:
        yield server


def run_django(env: Mapping[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=server_env(env), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_only_the_core_tables_are_made_and_the_checks_pass(core_env: Mapping[str, str]) -> None:
    tables = run_django(core_env, "-c", "import django; django.setup(); from django.db import connection; "
                                        "print(sorted(t for t in connection.introspection.table_names() "
                                        "if t.startswith('django_mcp')))")
    assert tables.strip() == "['django_mcp_mcpevent', 'django_mcp_mcpsession']"
    assert "System check identified no issues" in run_django(core_env, "-m", "django", "check")


async def exercise(client: Client) -> None:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    added = await client.call_tool("add", {"a": 2, "b": 3})
    resources = {str(resource.uri) for resource in (await client.list_resources()).resources}
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    motd = await client.read_resource("core://motd")
    echoed = await client.read_resource("core://echo/hello")
    prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
    greeting = await client.get_prompt("greet", {"name": "Ada"})
    assert tools == {"add"}
    assert added.structured_content == {"result": 5}
    assert resources == {"core://motd"} and templates == {"core://echo/{word}"}
    assert motd.contents[0].text == "Served by the core alone." and echoed.contents[0].text == "HELLO"
    assert prompts == {"greet"}
    assert isinstance(greeting.messages[0].content, types.TextContent)
    assert greeting.messages[0].content.text == "Hello, Ada!"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_streamable_http_in_both_eras(core_server: LiveServer, mode: str) -> None:
    async with asyncio.timeout(TIMEOUT):
        async with Client(core_server.mcp_url, mode=mode) as client:
            await exercise(client)


async def test_http_sse(core_server: LiveServer) -> None:
    async with asyncio.timeout(TIMEOUT):
        async with Client(sse_client(f"{core_server.url}/sse"), mode="legacy") as client:
            await exercise(client)


def test_stdio(core_env: Mapping[str, str]) -> None:
    process = StdioProcess(server_env(core_env), command=[sys.executable, "-m", "django_mcp.stdio"])
    try:
        process.initialize()
        called = process.call(request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}))
        read = process.call(modern(2, "resources/read", {"uri": "core://motd"}))
        got = process.call(modern(3, "prompts/get", {"name": "greet", "arguments": {"name": "Bo"}}))
    finally:
        process.stop()
    assert called["result"]["structuredContent"] == {"result": 2}, process.describe()
    assert read["result"]["contents"][0]["text"] == "Served by the core alone."
    assert got["result"]["messages"][0]["content"]["text"] == "Hello, Bo!"
