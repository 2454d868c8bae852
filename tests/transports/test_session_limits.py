"""
What one client may make a worker hold (``django_mcp.transports.session_limits`` and the limits
in the legacy transports): each limit is a setting, and past it the request is refused with a
clear error while nothing is stored. In process, through Channels' communicators.
"""

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from channels.testing import ApplicationCommunicator
from django.utils import timezone

from django_mcp.context import Context
from django_mcp.models import McpSession
from django_mcp.stores.session_ids import key_of
from django_mcp.stores.sessions import get_session_store
from django_mcp.sites import McpSite
from django_mcp.stores.sweep import sweep_now_and_then
from django_mcp.transports.http import McpHttpConsumer
from tests.transports.test_http_communicator import BASE_HEADERS, INITIALIZE, header_map, modern_request, post


pytestmark = pytest.mark.django_db(transaction=True)


def build_site() -> McpSite:
    site = McpSite()

    @site.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="who")
        return f"Hello {answer.content['name']}"

    @site.resource("memo://notes/{note_id}", name="note")
    def note(note_id: str) -> str:
        return f"note {note_id}"

    return site


@pytest.fixture
def app():
    return McpHttpConsumer.as_asgi(site=build_site())


def limits(settings, **values: Any) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, **values}


async def open_session(app, version: str = "2025-06-18", client: tuple[str, int] = ("10.0.0.1", 1000),
                       **params: Any) -> dict[str, Any]:
    message = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version, **params}}
    communicator = ApplicationCommunicator(app, {
        "type": "http", "http_version": "1.1", "method": "POST", "path": "/mcp", "raw_path": b"/mcp",
        "query_string": b"", "headers": BASE_HEADERS, "client": client})
    await communicator.send_input({"type": "http.request", "body": json.dumps(message).encode()})
    start = await communicator.receive_output(3)
    body = await communicator.receive_output(3)
    await communicator.wait(3)
    return {"status": start["status"], "headers": start["headers"], "body": body["body"]}


def session_headers(response: dict[str, Any], version: str = "2025-06-18") -> list[tuple[bytes, bytes]]:
    return [(b"mcp-session-id", header_map(response)[b"mcp-session-id"]), (b"mcp-protocol-version", version.encode())]


async def test_sessions_per_user_are_limited_per_client_address_for_anonymous_clients(app, settings):
    limits(settings, MAX_SESSIONS_PER_USER=3)
    opened = [await open_session(app) for _ in range(3)]
    assert all(response["status"] == 200 for response in opened)
    refused = await open_session(app)
    assert refused["status"] == 429
    error = json.loads(refused["body"])["error"]
    assert error["code"] == -32600 and "Too many open sessions" in error["message"]
    await get_session_store().flush()
    assert await McpSession.objects.acount() == 3  # nothing stored for the refused one
    # Another address is another principal; ending a session frees a place.
    assert (await open_session(app, client=("10.0.0.2", 1000)))["status"] == 200
    headers = session_headers(opened[0])
    communicator = ApplicationCommunicator(app, {
        "type": "http", "method": "DELETE", "path": "/mcp", "query_string": b"", "headers": [*BASE_HEADERS, *headers],
        "client": ("10.0.0.1", 1000)})
    await communicator.send_input({"type": "http.request", "body": b""})
    assert (await communicator.receive_output(3))["status"] == 200
    assert (await open_session(app))["status"] == 200


async def test_expired_sessions_do_not_count_and_are_swept(app, settings):
    limits(settings, MAX_SESSIONS_PER_USER=1, SESSION_IDLE_TIMEOUT_SECONDS=60, SESSION_SWEEP_SECONDS=0)
    first = await open_session(app)
    session_id = key_of(header_map(first)[b"mcp-session-id"].decode())
    await get_session_store().flush()
    await McpSession.objects.filter(pk=session_id).aupdate(last_seen_at=timezone.now() - timedelta(hours=1))
    assert (await open_session(app))["status"] == 200
    for _ in range(50):  # the sweep runs in the background, started by that initialize
        if not await McpSession.objects.filter(pk=session_id).aexists():
            break
        await asyncio.sleep(0.05)
    assert not await McpSession.objects.filter(pk=session_id).aexists()
    sweep_now_and_then()  # and the next one waits for its interval (0 here: runs again, harmlessly)


async def test_oversized_client_state_is_refused_and_stores_nothing(app, settings):
    limits(settings, MAX_CLIENT_STATE_SIZE=1024)
    refused = await open_session(app, capabilities={"experimental": {"blob": {"data": "x" * 5000}}})
    assert refused["status"] == 400
    error = json.loads(refused["body"])["error"]
    assert error["code"] == -32602 and "at most 1024" in error["message"]
    assert await McpSession.objects.acount() == 0
    assert (await open_session(app, capabilities={"experimental": {"small": {}}}))["status"] == 200


async def test_batch_length_is_limited(app, settings):
    limits(settings, MAX_BATCH_LENGTH=3)
    headers = session_headers(await open_session(app, "2025-03-26"), "2025-03-26")
    batch = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(4)]
    refused = await post(app, batch, headers)
    assert refused["status"] == 429
    assert "at most 3" in json.loads(refused["body"])["error"]["message"]
    answered = await post(app, batch[:3], headers)
    assert answered["status"] == 200 and len(json.loads(answered["body"])) == 3


async def test_subscriptions_per_session_are_limited(app, settings):
    limits(settings, MAX_SUBSCRIPTIONS=2)
    headers = session_headers(await open_session(app))
    for n in (1, 2):
        ok = await post(app, {"jsonrpc": "2.0", "id": n, "method": "resources/subscribe",
                              "params": {"uri": f"memo://notes/{n}"}}, headers)
        assert "result" in json.loads(ok["body"]), ok
    again = await post(app, {"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe",
                             "params": {"uri": "memo://notes/1"}}, headers)
    assert "result" in json.loads(again["body"])  # already held: not a new one
    refused = json.loads((await post(app, {"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
                                           "params": {"uri": "memo://notes/3"}}, headers))["body"])
    assert refused["error"]["code"] == -32602 and "Too many subscriptions" in refused["error"]["message"]


async def test_get_streams_per_session_are_limited(app, settings):
    limits(settings, MAX_STREAMS_PER_SESSION=1)
    headers = session_headers(await open_session(app))
    scope = {"type": "http", "method": "GET", "path": "/mcp", "query_string": b"",
             "headers": [(b"host", b"testserver"), (b"accept", b"text/event-stream"), *headers]}
    first = ApplicationCommunicator(app, scope)
    await first.send_input({"type": "http.request", "body": b""})
    assert (await first.receive_output(3))["status"] == 200
    second = ApplicationCommunicator(app, scope)
    await second.send_input({"type": "http.request", "body": b""})
    refused = await second.receive_output(3)
    assert refused["status"] == 429
    # Closing the first frees its place.
    await first.send_input({"type": "http.disconnect"})
    await first.wait(3)
    third = ApplicationCommunicator(app, scope)
    await third.send_input({"type": "http.request", "body": b""})
    assert (await third.receive_output(3))["status"] == 200
    await third.send_input({"type": "http.disconnect"})
    await third.wait(3)


async def test_pending_client_requests_per_session_are_limited(app, settings):
    limits(settings, MAX_PENDING_CLIENT_REQUESTS=1)
    capabilities = {"elicitation": {}}
    headers = session_headers(await open_session(app, capabilities=capabilities))
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
    waiting = ApplicationCommunicator(app, {
        "type": "http", "method": "POST", "path": "/mcp", "query_string": b"", "headers": [*BASE_HEADERS, *headers]})
    await waiting.send_input({"type": "http.request", "body": json.dumps({**call, "id": 1}).encode()})
    assert (await waiting.receive_output(3))["status"] == 200  # the elicitation request streams out
    second = json.loads((await post(app, {**call, "id": 2}, headers))["body"])
    text = second["result"]["content"][0]["text"] if "result" in second else second["error"]["message"]
    assert "Too many requests to the client outstanding" in text
    await waiting.send_input({"type": "http.disconnect"})


async def test_listen_filter_size_is_limited(app, settings):
    limits(settings, MAX_SUBSCRIPTIONS=2)
    message = modern_request("subscriptions/listen", {"notifications": {
        "resourceSubscriptions": [f"memo://notes/{n}" for n in range(3)]}})
    response = await post(app, message, [(b"mcp-protocol-version", b"2026-07-28"),
                                         (b"mcp-method", b"subscriptions/listen")])
    assert response["status"] == 400
    assert "Too many resource subscriptions" in json.loads(response["body"])["error"]["message"]


async def test_a_listen_reader_too_far_behind_has_its_stream_ended(settings):
    limits(settings, STREAM_QUEUE_SIZE=3)
    consumer = McpHttpConsumer()
    consumer.channel_layer, consumer.groups = None, set()  # no layer: nothing joined
    notifications = await consumer.listen({"toolsListChanged": True})
    for n in range(10):  # nobody reads: the stream's writer is stuck on a slow client
        consumer.queue_for_listener({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "n": n})
    assert consumer.listen_queue.qsize() == 4  # three notifications, then the end; nothing more held
    received = [message async for message in notifications]
    assert [message["n"] for message in received] == [0, 1, 2]
