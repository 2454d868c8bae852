"""
An HTTP+SSE session as one worker holds it (MCP spec 2024-11-05, basic/transports#http-with-sse),
in process through Channels' communicators: once its stream is open, the worker serves the
session's POSTs from memory — ``initialize`` writes what it negotiated and keeps it, so neither it
nor the requests after it read the session row again.
"""

import json
from typing import Any

import pytest
from channels.testing import ApplicationCommunicator

from django_mcp.models import McpSession
from django_mcp.stores.database_sessions import DatabaseSessionStore
from django_mcp.transports.http_sse import LegacySseMessagesConsumer, LegacySseStreamConsumer
from tests.transports.test_http_communicator import BASE_HEADERS, build_site


pytestmark = pytest.mark.django_db(transaction=True)


def stream_scope() -> dict[str, Any]:
    return {"type": "http", "http_version": "1.1", "method": "GET", "path": "/sse", "raw_path": b"/sse",
            "query_string": b"", "headers": [(b"host", b"testserver"), (b"accept", b"text/event-stream")]}


async def next_event(stream: ApplicationCommunicator) -> tuple[str, str]:
    """The next SSE event's (name, data), keep-alive comments skipped."""
    while True:
        chunk = (await stream.receive_output(3))["body"].decode()
        fields = dict(line.split(": ", 1) for line in chunk.strip().splitlines() if not line.startswith(":"))
        if fields:
            return fields.get("event", "message"), fields["data"]


async def test_a_session_held_here_is_not_read_again_after_it_opens(monkeypatch):
    site = build_site()
    stream_app = LegacySseStreamConsumer.as_asgi(site=site)
    messages_app = LegacySseMessagesConsumer.as_asgi(site=site)
    reads: list[str] = []
    get = DatabaseSessionStore.get

    async def counting_get(self: DatabaseSessionStore, session_id: str) -> Any:
        reads.append(session_id)
        return await get(self, session_id)

    monkeypatch.setattr(DatabaseSessionStore, "get", counting_get)
    stream = ApplicationCommunicator(stream_app, stream_scope())
    await stream.send_input({"type": "http.request", "body": b""})
    try:
        assert (await stream.receive_output(3))["status"] == 200
        name, endpoint = await next_event(stream)
        assert name == "endpoint", endpoint
        path, _, query = endpoint.partition("?")

        async def send(message: dict[str, Any]) -> None:
            response = await post_message(messages_app, message, path, query)
            assert response["status"] == 202, response

        await send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {"sampling": {}},
            "clientInfo": {"name": "cache-test", "version": "1.0"}}})
        name, data = await next_event(stream)
        assert json.loads(data)["result"]["protocolVersion"] == "2024-11-05"
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        name, data = await next_event(stream)
        assert {tool["name"] for tool in json.loads(data)["result"]["tools"]} >= {"echo"}
        assert reads == [], "the worker holding the stream read the session again"
        row = await McpSession.objects.aget(pk=query.partition("session_id=")[2])
        assert (row.protocol_version, row.client_capabilities) == ("2024-11-05", {"sampling": {}})
    finally:
        await stream.send_input({"type": "http.disconnect"})
        await stream.wait(3)


async def post_message(app, message: dict[str, Any], path: str, query: str) -> dict[str, Any]:
    """POST one message to the session's endpoint; the response's start (its status and headers)."""
    communicator = ApplicationCommunicator(app, {
        "type": "http", "http_version": "1.1", "method": "POST", "path": path, "raw_path": path.encode(),
        "query_string": query.encode(), "headers": BASE_HEADERS})
    await communicator.send_input({"type": "http.request", "body": json.dumps(message).encode()})
    try:
        start = await communicator.receive_output(3)
        await communicator.receive_output(3)  # the body
        return start
    finally:
        await communicator.wait(3)
