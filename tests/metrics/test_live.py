"""
The metrics app on a real daphne server (``live_server_mcp``, which installs ``django_mcp.metrics``
through ``tests.settings``): the official SDK client and raw HTTP do things, and ``/metrics``, read
by prometheus_client's own parser as Prometheus would, counts them. The server is shared with other
tests, so every assertion is on the difference between two scrapes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError
from prometheus_client.parser import text_string_to_metric_families


TIMEOUT = 20
JSON_AND_SSE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(server: Any) -> Samples:
    response = httpx2.get(server.url + "/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(response.text) for sample in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def grew(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


async def test_requests_tool_calls_and_sessions_are_counted(live_server_mcp: Any) -> None:
    before = scrape(live_server_mcp)
    async with asyncio.timeout(TIMEOUT):
        async with Client(live_server_mcp.mcp_url, mode="legacy") as client:
            assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
            assert (await client.call_tool("test_error_handling", {})).is_error
            with pytest.raises(MCPError):
                await client.call_tool("no_such_tool", {})  # an unknown tool: invalid params
            await client.list_tools()
    after = scrape(live_server_mcp)

    ok = {"method": "tools/call", "era": "legacy", "transport": "streamable-http", "outcome": "ok", "code": ""}
    assert grew(before, after, "mcp_requests_total", **ok) == 1
    assert grew(before, after, "mcp_requests_total", **{**ok, "outcome": "tool_error"}) == 1
    assert grew(before, after, "mcp_requests_total", **{**ok, "outcome": "error", "code": "-32602"}) == 1
    assert grew(before, after, "mcp_requests_total", **{**ok, "method": "tools/list"}) >= 1
    assert grew(before, after, "mcp_request_duration_seconds_count", method="tools/call", era="legacy") == 3
    assert grew(before, after, "mcp_tool_calls_total", tool="echo", outcome="ok") == 1
    assert grew(before, after, "mcp_tool_calls_total", tool="test_error_handling", outcome="tool_error") == 1
    assert grew(before, after, "mcp_tool_call_duration_seconds_count", tool="echo") == 1
    assert grew(before, after, "mcp_sessions_started_total", transport="streamable-http") == 1
    assert grew(before, after, "mcp_sessions_ended_total") == 1  # the SDK DELETEs its session on exit


async def test_a_modern_request_counts_in_its_era_and_an_unknown_method_as_other(live_server_mcp: Any) -> None:
    before = scrape(live_server_mcp)
    async with asyncio.timeout(TIMEOUT):
        async with Client(live_server_mcp.mcp_url, mode="2026-07-28") as client:
            await client.call_tool("echo", {"text": "hi"})
        body = {"jsonrpc": "2.0", "id": 1, "method": "made/up", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(live_server_mcp.mcp_url, json=body, headers={
                **JSON_AND_SSE, "mcp-protocol-version": "2026-07-28", "mcp-method": "made/up"})
    assert response.json()["error"]["code"] == -32601
    after = scrape(live_server_mcp)
    assert grew(before, after, "mcp_requests_total", method="tools/call", era="modern", transport="streamable-http",
                outcome="ok", code="") == 1
    assert grew(before, after, "mcp_requests_total", method="other", era="modern", transport="streamable-http",
                outcome="error", code="-32601") == 1
    assert not any(dict(labels).get("method") == "made/up" for _, labels in after)


async def test_refusals_and_authentication_failures_are_counted(live_server_mcp: Any) -> None:
    before = scrape(live_server_mcp)
    async with httpx2.AsyncClient(timeout=10) as http:
        wrong_type = await http.post(live_server_mcp.mcp_url, content=b"{}",
                                     headers={**JSON_AND_SSE, "content-type": "text/plain"})
        bad_key = await http.post(live_server_mcp.mcp_url, content=b"{}",
                                  headers={**JSON_AND_SSE, "x-api-key": "not-a-key"})
    assert (wrong_type.status_code, bad_key.status_code) == (415, 401)
    after = scrape(live_server_mcp)
    assert grew(before, after, "mcp_refused_requests_total", status="415", transport="streamable-http") == 1
    assert grew(before, after, "mcp_refused_requests_total", status="401", transport="streamable-http") == 1
    assert grew(before, after, "mcp_authentication_failures_total", transport="streamable-http",
                reason="invalid_credential") == 1
    assert "not-a-key" not in httpx2.get(live_server_mcp.url + "/metrics", timeout=10).text


async def test_open_streams_are_gauged_while_they_are_open(live_server_mcp: Any) -> None:
    async with httpx2.AsyncClient(timeout=10) as http:
        initialize = await http.post(live_server_mcp.mcp_url, headers=JSON_AND_SSE, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "gauge", "version": "1"}}})
        session = {"mcp-session-id": initialize.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        before = value(scrape(live_server_mcp), "mcp_open_streams", kind="session")
        async with http.stream("GET", live_server_mcp.mcp_url,
                               headers={"accept": "text/event-stream", **session}) as stream:
            assert stream.status_code == 200
            await anext(stream.aiter_bytes())  # the stream is open once its first comment arrives
            assert value(scrape(live_server_mcp), "mcp_open_streams", kind="session") == before + 1
        for _ in range(50):  # the server notices the closed connection a moment later
            if value(scrape(live_server_mcp), "mcp_open_streams", kind="session") == before:
                break
            await asyncio.sleep(0.1)
        assert value(scrape(live_server_mcp), "mcp_open_streams", kind="session") == before
        await http.delete(live_server_mcp.mcp_url, headers={**JSON_AND_SSE, **session})
    families = {family.name for family in text_string_to_metric_families(
        httpx2.get(live_server_mcp.url + "/metrics", timeout=10).text)}
    assert {"mcp_cached_sessions", "process_cpu_seconds"} <= families  # the default registry's too
