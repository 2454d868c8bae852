"""
A session's standalone GET stream against changes made while it opens (MCP spec 2025-11-25,
basic/transports#listening-for-messages-from-the-server; server/resources#subscriptions).

The stream reads its session, then joins the session's channel group; a ``resources/subscribe``
or a ``DELETE`` that lands between the two tells a group the stream is not in yet. The SDK client
opens its GET stream in the background right after ``initialized``, so a subscribe racing it is
the ordinary case (seen in CI: one of two subscribers on a worker never heard of a change).
"""

import asyncio
import contextvars
import json
from typing import Any

import pytest
from channels.testing import ApplicationCommunicator, HttpCommunicator

from django_mcp.notifications import anotify_resource_updated
from django_mcp.models import McpSession
from django_mcp.stores import pending_rows
from django_mcp.stores.session_ids import key_of
from django_mcp.stores.sessions import get_session_store
from django_mcp.transports import http_sessions
from django_mcp.transports.http import McpHttpConsumer
from django_mcp.transports.session_cache import session_cache
from tests.transports.test_http_communicator import BASE_HEADERS, post
from tests.transports.test_session_limits import build_site, open_session, session_headers


pytestmark = pytest.mark.django_db(transaction=True)

URI = "memo://notes/1"  # a resource of test_session_limits.build_site()


@pytest.fixture
def app():
    return McpHttpConsumer.as_asgi(site=build_site())


async def open_stored_session(app) -> list[tuple[bytes, bytes]]:
    """
    A session with its row written: the race here is with the stream's group joins. (Unwritten,
    the change's request writes the row on its own thread while the GET's holds a connection
    too, which SQLite's shared in-memory test database refuses at once, where a file database
    waits its turn.)
    """
    headers = session_headers(await open_session(app))
    await get_session_store().flush()
    return headers


def get_stream(app, headers: list[tuple[bytes, bytes]]) -> ApplicationCommunicator:
    return ApplicationCommunicator(app, {
        "type": "http", "http_version": "1.1", "method": "GET", "path": "/mcp", "raw_path": b"/mcp",
        "query_string": b"", "headers": [(b"host", b"testserver"), (b"accept", b"text/event-stream"), *headers]})


def meanwhile(monkeypatch, change) -> None:
    """Make ``change`` happen after the GET has read its session and before it joins any group."""
    load = http_sessions.load_live_session

    pending = [change]

    async def load_then_change(session_id: str) -> Any:
        session = await load(session_id)
        if pending:  # once: the change's own request loads the session through here too
            # As when another worker serves the change: it works on its own copy of the session,
            # not on the object this request holds (one worker's requests share a cached copy).
            session_cache.forget(session_id)
            # Another client's request: its own task and context, not this request's.
            await asyncio.get_running_loop().create_task(pending.pop()(), context=contextvars.Context())
        return session

    monkeypatch.setattr(http_sessions, "load_live_session", load_then_change)


async def test_a_subscribe_while_the_stream_opens_is_not_lost(app, monkeypatch):
    headers = await open_stored_session(app)

    async def subscribe() -> None:
        answer = await post(app, {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
                                  "params": {"uri": URI}}, headers)
        assert "result" in json.loads(answer["body"]), answer

    meanwhile(monkeypatch, subscribe)
    stream = get_stream(app, headers)
    await stream.send_input({"type": "http.request", "body": b""})
    try:
        assert (await stream.receive_output(3))["status"] == 200
        assert (await stream.receive_output(3))["body"].startswith(b":")  # the first keep-alive
        await anotify_resource_updated(URI)
        event = await stream.receive_output(3)
        assert b'"notifications/resources/updated"' in event["body"] and URI.encode() in event["body"]
    finally:
        await stream.send_input({"type": "http.disconnect"})
        await stream.wait(3)


async def test_a_delete_while_the_stream_opens_does_not_leave_it_open(app, monkeypatch):
    headers = await open_stored_session(app)

    async def delete() -> None:
        communicator = HttpCommunicator(app, "DELETE", "/mcp", b"", [*BASE_HEADERS, *headers])
        assert (await communicator.get_response(timeout=3))["status"] == 200

    meanwhile(monkeypatch, delete)
    stream = get_stream(app, headers)
    await stream.send_input({"type": "http.request", "body": b""})
    start = await stream.receive_output(3)
    assert start["status"] == 404
    await stream.wait(3)


async def test_a_stream_opened_before_its_sessions_row_writes_it_at_its_first_keepalive(app, settings, monkeypatch):
    # A GET stream opens on a session this worker has not written yet (the batch writes rows a
    # second after they open): the stream neither writes the row itself nor ends when the row is
    # still missing at its first keep-alive, which writes it instead (as when the worker that
    # opened the session stopped before its batch), whatever the touch interval.
    monkeypatch.setattr(pending_rows, "WRITE_DELAY", 3600.0)  # the batch writer never gets to it
    settings.DJANGO_MCP = {**getattr(settings, "DJANGO_MCP", {}), "SSE_KEEPALIVE_SECONDS": 0.2,
                           "SESSION_IDLE_TIMEOUT_SECONDS": 3600}
    headers = session_headers(await open_session(app))
    key = key_of(dict(headers)[b"mcp-session-id"].decode())
    stream = get_stream(app, headers)
    await stream.send_input({"type": "http.request", "body": b""})
    try:
        assert (await stream.receive_output(3))["status"] == 200
        assert (await stream.receive_output(3))["body"].startswith(b":")
        assert not await McpSession.objects.filter(pk=key).aexists(), "the stream wrote the row as it opened"
        await asyncio.sleep(1.0)  # past the first keep-alives (0.2 s apart)
        assert await McpSession.objects.filter(pk=key, ended=False).aexists(), "the keep-alive did not write the row"
        assert (await stream.receive_output(3))["body"].startswith(b":"), "the stream ended"
    finally:
        await stream.send_input({"type": "http.disconnect"})
        await stream.wait(3)


async def test_a_stream_touches_its_session_only_once_the_touch_interval_has_passed(app, settings, monkeypatch):
    # Opening the stream wrote or read the row: touching it again at the first keep-alive would
    # be a write per stream, thousands at once when a restarted worker's clients come back.
    settings.DJANGO_MCP = {**getattr(settings, "DJANGO_MCP", {}), "SSE_KEEPALIVE_SECONDS": 0.2,
                           "SESSION_IDLE_TIMEOUT_SECONDS": 4}  # a touch every second
    headers = await open_stored_session(app)
    touches: list[str] = []
    store = get_session_store()
    touch = store.touch

    async def counting_touch(session_id: str) -> bool:
        touches.append(session_id)
        return await touch(session_id)

    monkeypatch.setattr(store, "touch", counting_touch)
    stream = get_stream(app, headers)
    await stream.send_input({"type": "http.request", "body": b""})
    try:
        assert (await stream.receive_output(3))["status"] == 200
        await asyncio.sleep(0.7)  # a few keep-alives, less than the touch interval
        assert touches == [], "touched at the first keep-alive"
        await asyncio.sleep(1.0)
        assert len(touches) == 1, "not touched once the interval passed"
    finally:
        await stream.send_input({"type": "http.disconnect"})
        await stream.wait(3)
