"""
The Streamable HTTP consumer in process, through Channels' ``HttpCommunicator``: a legacy
handshake, 2026-07-28 JSON answers, SSE when a tool reports progress, and the HTTP-level refusals
(MCP spec 2025-11-25, basic/transports#streamable-http; MCP spec 2026-07-28, basic/transports/streamable-http).
"""

import asyncio
import json
import re
from typing import Any

import pytest
from channels.testing import HttpCommunicator

import django_mcp.asgi
from django_mcp.context import Context
from django_mcp.models import McpSession
from django_mcp.stores.session_ids import key_of
from django_mcp.stores.sessions import get_session_store
from django_mcp.sites import McpSite
from django_mcp.transports.http import McpHttpConsumer


pytestmark = pytest.mark.django_db(transaction=True)

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
BASE_HEADERS = [
    (b"host", b"testserver"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]


def build_site() -> McpSite:
    site = McpSite()

    @site.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @site.tool()
    async def steps(count: int, ctx: Context) -> str:
        for step in range(1, count + 1):
            await asyncio.sleep(0)
            await ctx.report_progress(step, count, f"step {step}")
        return f"done {count}"

    @site.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="who")
        return f"Hello {answer.content['name']}"

    return site


@pytest.fixture
def app():
    return McpHttpConsumer.as_asgi(site=build_site())


def header_map(response: dict[str, Any]) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in response["headers"]}


async def post(app, body: Any, headers: list[tuple[bytes, bytes]] | None = None, *, raw: bytes | None = None,
               path: str = "/mcp", timeout: float = 3) -> dict[str, Any]:
    payload = raw if raw is not None else json.dumps(body).encode()
    communicator = HttpCommunicator(app, "POST", path, payload, [*BASE_HEADERS, *(headers or [])])
    try:
        response = await communicator.get_response(timeout=timeout)
        await communicator.wait(timeout=timeout)
    finally:
        communicator.stop(exceptions=False)
    return response


def modern_headers(method: str, name: str | None = None) -> list[tuple[bytes, bytes]]:
    headers = [(b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", method.encode())]
    if name is not None:
        headers.append((b"mcp-name", name.encode()))
    return headers


def modern_request(method: str, params: dict[str, Any] | None = None, request_id: Any = 1,
                   meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method,
            "params": {**(params or {}), "_meta": {**META, **(meta or {})}}}


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of an SSE body's events, in order (comments skipped)."""
    events = []
    for block in re.split(r"\n\n", body.decode("utf-8")):
        data = [line[len("data: "):] for line in block.split("\n") if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test-client", "version": "1.0"}}}


# Legacy ----------------------------------------------------------------------------------------


async def test_legacy_initialize_mints_a_session(app):
    response = await post(app, INITIALIZE)
    assert response["status"] == 200
    headers = header_map(response)
    assert headers[b"content-type"] == b"application/json"
    session_id = headers[b"mcp-session-id"].decode()
    assert re.fullmatch(r"[\x21-\x7e]{16,}", session_id)
    body = json.loads(response["body"])
    assert body["id"] == 0
    assert body["result"]["protocolVersion"] == "2025-06-18"
    assert body["result"]["serverInfo"]["name"] == "django-mcp-tests"
    assert "tools" in body["result"]["capabilities"]
    assert "resultType" not in body["result"]

    await get_session_store().flush()  # the row follows the answer (stores/pending_rows.py)
    session = await McpSession.objects.aget(pk=key_of(session_id))
    assert session.protocol_version == "2025-06-18"
    assert session.client_info == {"name": "test-client", "version": "1.0"}

    session_headers = [(b"mcp-session-id", session_id.encode()), (b"mcp-protocol-version", b"2025-06-18")]
    initialized = await post(app, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_headers)
    assert initialized["status"] == 202
    assert initialized["body"] == b""

    listed = await post(app, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session_headers)
    assert listed["status"] == 200
    result = json.loads(listed["body"])["result"]
    assert [tool["name"] for tool in result["tools"]] == ["echo", "steps", "ask"]
    assert "ttlMs" not in result and "resultType" not in result

    called = await post(app, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                              "params": {"name": "echo", "arguments": {"text": "hi"}}}, session_headers)
    assert json.loads(called["body"]) == {"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": "hi"}], "isError": False}}


async def test_legacy_request_needs_a_known_session(app):
    missing = await post(app, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert missing["status"] == 400
    unknown = await post(app, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         [(b"mcp-session-id", b"0123456789abcdef0123456789abcdef")])
    assert unknown["status"] == 404
    assert json.loads(unknown["body"])["id"] == 1


async def test_legacy_progress_streams_as_sse(app):
    session_id = header_map(await post(app, INITIALIZE))[b"mcp-session-id"]
    response = await post(app, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "steps", "arguments": {"count": 2}, "_meta": {"progressToken": 77}}},
        [(b"mcp-session-id", session_id), (b"mcp-protocol-version", b"2025-06-18")])
    assert response["status"] == 200
    assert header_map(response)[b"content-type"].startswith(b"text/event-stream")
    events = sse_events(response["body"])
    assert [event.get("method") for event in events] == ["notifications/progress", "notifications/progress", None]
    assert [event["params"]["progress"] for event in events[:2]] == [1, 2]
    assert events[-1] == {"jsonrpc": "2.0", "id": 5, "result": {
        "content": [{"type": "text", "text": "done 2"}], "isError": False}}


# 2026-07-28 --------------------------------------------------------------------------------------


async def test_modern_tools_call_answers_json(app):
    response = await post(app, modern_request("tools/call", {"name": "echo", "arguments": {"text": "hey"}}, 7),
                          modern_headers("tools/call", "echo"))
    assert response["status"] == 200
    headers = header_map(response)
    assert headers[b"content-type"] == b"application/json"
    assert b"mcp-session-id" not in headers
    body = json.loads(response["body"])
    assert body["id"] == 7
    result = body["result"]
    assert result["resultType"] == "complete"
    assert result["content"] == [{"type": "text", "text": "hey"}]
    assert result["isError"] is False
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "django-mcp-tests"
    assert await McpSession.objects.acount() == 0  # stateless


async def test_modern_progress_answers_as_sse_in_order(app):
    request = modern_request("tools/call", {"name": "steps", "arguments": {"count": 3}}, "req-1",
                             meta={"progressToken": "tok"})
    response = await post(app, request, modern_headers("tools/call", "steps"))
    assert response["status"] == 200
    headers = header_map(response)
    assert headers[b"content-type"].startswith(b"text/event-stream")
    assert headers[b"x-accel-buffering"] == b"no"
    assert b"id: " not in response["body"]  # no resumability in 2026-07-28
    events = sse_events(response["body"])
    assert len(events) == 4
    for step, event in enumerate(events[:3], start=1):
        assert event == {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "tok", "progress": step, "total": 3, "message": f"step {step}"}}
    final = events[-1]
    assert final["id"] == "req-1"
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["content"] == [{"type": "text", "text": "done 3"}]


async def test_modern_without_progress_token_stays_json(app):
    response = await post(app, modern_request("tools/call", {"name": "steps", "arguments": {"count": 2}}),
                          modern_headers("tools/call", "steps"))
    assert header_map(response)[b"content-type"] == b"application/json"
    assert json.loads(response["body"])["result"]["content"][0]["text"] == "done 2"


async def test_modern_mrtr_over_http(app):
    first = await post(app, modern_request("tools/call", {"name": "ask", "arguments": {}}, 1,
                                           meta={"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}),
                       modern_headers("tools/call", "ask"))
    assert first["status"] == 200
    result = json.loads(first["body"])["result"]
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["who"]
    retry = await post(app, modern_request("tools/call", {
        "name": "ask", "arguments": {}, "requestState": result["requestState"],
        "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}}, 2,
        meta={"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}),
        modern_headers("tools/call", "ask"))
    assert json.loads(retry["body"])["result"]["content"] == [{"type": "text", "text": "Hello Ada"}]


async def test_modern_missing_capability_is_400_32021(app):
    response = await post(app, modern_request("tools/call", {"name": "ask", "arguments": {}}),
                          modern_headers("tools/call", "ask"))
    assert response["status"] == 400
    error = json.loads(response["body"])["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_modern_discover(app):
    response = await post(app, modern_request("server/discover"), modern_headers("server/discover"))
    assert response["status"] == 200
    result = json.loads(response["body"])["result"]
    assert result["supportedVersions"][0] == MODERN
    assert result["resultType"] == "complete"
    assert "ttlMs" in result and result["cacheScope"] in ("public", "private")


async def test_page_size_setting_paginates_tools_list(app, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "PAGE_SIZE": 2}
    first = json.loads((await post(app, modern_request("tools/list"), modern_headers("tools/list")))["body"])
    assert [tool["name"] for tool in first["result"]["tools"]] == ["echo", "steps"]
    cursor = first["result"]["nextCursor"]
    second = json.loads((await post(app, modern_request("tools/list", {"cursor": cursor}, 2),
                                    modern_headers("tools/list")))["body"])
    assert [tool["name"] for tool in second["result"]["tools"]] == ["ask"]
    assert "nextCursor" not in second["result"]


async def test_modern_initialize_is_the_removed_method(app):
    request = modern_request("initialize", {"protocolVersion": MODERN, "capabilities": {},
                                            "clientInfo": {"name": "c", "version": "1"}})
    response = await post(app, request, modern_headers("initialize"))
    assert response["status"] == 404
    assert json.loads(response["body"])["error"]["code"] == -32601
    assert b"mcp-session-id" not in header_map(response)


async def test_modern_removed_method_is_404(app):
    response = await post(app, modern_request("ping"), modern_headers("ping"))
    assert response["status"] == 404
    assert json.loads(response["body"])["error"]["code"] == -32601


async def test_modern_header_mismatch_is_400_32020(app):
    response = await post(app, modern_request("tools/call", {"name": "echo", "arguments": {"text": "x"}}),
                          modern_headers("tools/call", "steps"))
    assert response["status"] == 400
    body = json.loads(response["body"])
    assert body["error"]["code"] == -32020
    assert body["id"] == 1


async def test_modern_unsupported_version_is_400_32022(app):
    request = modern_request("tools/list", meta={"io.modelcontextprotocol/protocolVersion": "2099-01-01"})
    response = await post(app, request, [(b"mcp-protocol-version", b"2099-01-01"), (b"mcp-method", b"tools/list")])
    assert response["status"] == 400
    error = json.loads(response["body"])["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2099-01-01"


async def test_modern_missing_capabilities_meta_is_400_32602(app):
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
               "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}}
    response = await post(app, request, modern_headers("tools/list"))
    assert response["status"] == 400
    assert json.loads(response["body"])["error"]["code"] == -32602


# HTTP-level checks ----------------------------------------------------------------------------


async def test_parse_error_is_400(app):
    response = await post(app, None, raw=b"{not json")
    assert response["status"] == 400
    body = json.loads(response["body"])
    assert body["id"] is None and body["error"]["code"] == -32700


async def test_foreign_origin_is_403(app):
    response = await post(app, modern_request("tools/list"),
                          [*modern_headers("tools/list"), (b"origin", b"https://evil.example")])
    assert response["status"] == 403


async def test_foreign_host_is_refused(app):
    communicator = HttpCommunicator(app, "POST", "/mcp", json.dumps(INITIALIZE).encode(),
                                    [(b"host", b"evil.example"), *BASE_HEADERS[1:]])
    response = await communicator.get_response()
    await communicator.wait()
    assert response["status"] == 421


async def test_wrong_accept_and_content_type(app):
    communicator = HttpCommunicator(app, "POST", "/mcp", json.dumps(INITIALIZE).encode(),
                                    [(b"host", b"testserver"), (b"content-type", b"application/json"),
                                     (b"accept", b"application/json")])
    assert (await communicator.get_response())["status"] == 406
    await communicator.wait()
    communicator = HttpCommunicator(app, "POST", "/mcp", json.dumps(INITIALIZE).encode(),
                                    [(b"host", b"testserver"), (b"content-type", b"text/plain"),
                                     (b"accept", b"application/json, text/event-stream")])
    assert (await communicator.get_response())["status"] == 415
    await communicator.wait()


async def test_get_without_session_is_405(app):
    communicator = HttpCommunicator(app, "GET", "/mcp", b"", [(b"host", b"testserver"),
                                                             (b"accept", b"text/event-stream")])
    response = await communicator.get_response()
    await communicator.wait()
    assert response["status"] == 405
    assert b"POST" in header_map(response)[b"allow"]


async def test_asgi_application_routes_mcp_and_the_rest():
    seen = []

    async def django_app(scope, receive, send):
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    application = django_mcp.asgi.application(django_app, site=build_site())
    response = await post(application, modern_request("tools/call", {"name": "echo", "arguments": {"text": "a"}}),
                          modern_headers("tools/call", "echo"))
    assert json.loads(response["body"])["result"]["content"] == [{"type": "text", "text": "a"}]
    response = await post(application, modern_request("tools/list"), modern_headers("tools/list"), path="/mcp/")
    assert [t["name"] for t in json.loads(response["body"])["result"]["tools"]] == ["echo", "steps", "ask"]
    other = await post(application, {}, path="/admin/")
    assert other["status"] == 204
    assert seen == ["/admin/"]
