"""
The request log (django_mcp/request_log.py): one INFO line per MCP request on
``django_mcp.requests``. Its pieces in isolation, then lines written by a real daphne server whose
logger is at INFO, for calls made by the official SDK client.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping

import pytest
from mcp import Client

from django_mcp import request_log
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.versions import Era
from tests.live import LiveServer


class User:
    is_authenticated = True

    def get_username(self) -> str:
        return "alice"


def context(**overrides) -> RequestContext:
    values = {"era": Era.LEGACY, "protocol_version": "2025-11-25", "user": User(),
              "client_info": {"name": "Claude Code", "version": "2.1"}}
    return RequestContext(**{**values, **overrides})


def call(name: str = "search", arguments: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}


@pytest.mark.parametrize(("response", "expected"), [
    ({"result": {"content": []}}, ("ok", None)),
    ({"result": {"content": [], "isError": True}}, ("tool_error", None)),
    ({"result": {"resultType": "input_required"}}, ("input_required", None)),
    ({"error": {"code": -32602, "message": "no"}}, ("error", -32602)),
    (None, ("cancelled", None)),
])
def test_outcomes(response, expected) -> None:
    assert request_log.outcome_of(response) == expected


def test_a_line_names_the_request_and_nothing_secret(settings) -> None:
    message = call(arguments={"q": "books", "password": "hunter2"})
    fields = request_log.fields_of(message, context(), "ok", None, 3.14159)
    line = request_log.format_fields(fields)
    assert line == ('mcp_request method=tools/call target=search outcome=ok duration_ms=3.1 user=alice '
                    'client="Claude Code/2.1" era=legacy version=2025-11-25 transport=streamable-http id=7')
    assert "hunter2" not in line and "books" not in line


def test_arguments_are_logged_redacted_only_when_asked(settings) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_LOG_ARGUMENTS": True}
    fields = request_log.fields_of(call(arguments={"q": "books", "Password": "hunter2"}), context(), "ok", None, 1)
    line = request_log.format_fields(fields)
    assert "books" in line and "hunter2" not in line and "[redacted]" in line


def test_a_client_cannot_forge_a_second_line_or_field() -> None:
    message = call(name='x outcome=ok\nmcp_request method=forged')
    line = request_log.format_fields(request_log.fields_of(
        message, context(user=None, client_info={"name": "evil\r\nclient"}), "error", -32602, 1))
    assert "\n" not in line and "\r" not in line
    assert 'target="x outcome=ok\\nmcp_request method=forged"' in line
    assert "user=- " in line and "code=-32602" in line


def test_nothing_is_built_while_nobody_listens(caplog) -> None:
    logger = logging.getLogger("django_mcp.requests")
    from django_mcp.metrics.receivers import connect_receivers, disconnect_receivers

    disconnect_receivers()
    try:
        with caplog.at_level(logging.WARNING, logger="django_mcp.requests"):
            assert not logger.isEnabledFor(logging.INFO)
            assert request_log.started() is None
    finally:
        connect_receivers()
    assert request_log.started() is not None  # the metrics app listens


# --- a real server ----------------------------------------------------------------------------


def request_lines(server: LiveServer) -> list[str]:
    return [line.split("mcp_request ", 1)[1] for line in server.log_tail(400).splitlines()
            if "mcp_request " in line]


def test_a_live_server_logs_one_line_per_request(sqlite_server_env: Mapping[str, str]) -> None:
    env = {**sqlite_server_env, "MCP_TEST_LOG_LEVEL": "INFO"}

    async def use(url: str) -> None:
        async with asyncio.timeout(20):
            async with Client(url, mode="legacy") as client:
                await client.call_tool("echo", {"text": "secret words"})
                await client.read_resource("memo://greeting")
            async with Client(url, mode="2026-07-28") as client:
                await client.get_prompt("summarize", {"topic": "owls"})

    with LiveServer(env=env, name="request-log") as server:
        asyncio.run(use(server.mcp_url))
        lines = request_lines(server)
    by_method = {re.search(r"method=(\S+)", line).group(1): line for line in lines}
    call_line = by_method["tools/call"]
    assert re.fullmatch(r'method=tools/call target=echo outcome=ok duration_ms=\d+\.\d user=- client=\S+ '
                        r'era=legacy version=2025-11-25 transport=streamable-http id=\d+', call_line), call_line
    assert "target=memo://greeting outcome=ok" in by_method["resources/read"]
    assert "target=summarize outcome=ok" in by_method["prompts/get"] and "era=modern" in by_method["prompts/get"]
    assert not any("secret words" in line or "owls" in line for line in lines)
