"""Each request's sync work runs on a thread of its own (transports/requests.py)."""

import asyncio
import json
import threading

import pytest
from asgiref.sync import SyncToAsync, ThreadSensitiveContext, sync_to_async
from channels.testing import HttpCommunicator

from django_mcp.sites import McpSite
from django_mcp.transports.http import McpHttpConsumer


MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def call(app, request_id: int, name: str) -> HttpCommunicator:
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": META}}
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", MODERN.encode()),
               (b"mcp-method", b"tools/call"), (b"mcp-name", name.encode())]
    return HttpCommunicator(app, "POST", "/mcp", json.dumps(body).encode(), headers)


@pytest.mark.django_db(transaction=True)
async def test_a_blocked_sync_tool_does_not_hold_up_another_request():
    # The first tool blocks its thread until the second tool, in another request, releases it.
    # On one shared thread the second could never run: both would hang until the timeout.
    released = threading.Event()
    site = McpSite("threads")

    @site.tool()
    def wait_for_release() -> str:
        return "released" if released.wait(timeout=10) else "never released"

    @site.tool()
    def release() -> str:
        released.set()
        return "done"

    app = McpHttpConsumer.as_asgi(site=site)
    waiting = asyncio.ensure_future(call(app, 1, "wait_for_release").get_response(timeout=15))
    await asyncio.sleep(0.2)  # let the first request reach its thread
    releasing = await call(app, 2, "release").get_response(timeout=5)
    first = await waiting
    assert json.loads(releasing["body"])["result"]["content"][0]["text"] == "done"
    assert json.loads(first["body"])["result"]["content"][0]["text"] == "released"


def test_a_slow_sync_tool_does_not_stall_other_clients_of_a_live_worker(live_server_mcp):
    # Over real sockets on daphne: while one client's sync tool blocks its thread, another
    # client's sync tool is answered; the slow one is still running when that answer arrives.
    from concurrent.futures import ThreadPoolExecutor

    from tests.transports.sse_client import request

    def modern(name: str, arguments: dict, request_id: int):
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments, "_meta": META}}
        return request(live_server_mcp, "POST", body, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                                                       "Mcp-Name": name})

    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(modern, "sleep_sync", {"seconds": 4}, 1)
        quick = modern("echo", {"text": "still served"}, 2)
        assert quick.body["result"]["content"][0]["text"] == "still served"
        assert not slow.done(), "the slow tool finished first: it did not overlap the quick one"
        assert slow.result(timeout=15).body["result"]["content"][0]["text"] == "slept 4.0"


# No garbage for the collector -----------------------------------------------------------------


def legacy_headers(session_id: str | None = None) -> list[tuple[bytes, bytes]]:
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", b"2025-11-25")]
    return headers + ([(b"mcp-session-id", session_id.encode())] if session_id else [])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("tool", ["echo", "echo_async"])
async def test_an_answered_request_leaves_nothing_for_the_cyclic_collector(era, tool):
    # A request whose objects form a cycle (its context and its Context pointed at each other,
    # and through the senders at the consumer) is freed only by a collection; under load the
    # collector then walked every request's objects. Answered requests must go by refcount alone.
    import gc

    from django_mcp.protocol.context import RequestContext
    from tests.asgi import application

    session_id = None
    if era == "legacy":
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        response = await HttpCommunicator(application, "POST", "/mcp", json.dumps(init).encode(),
                                          legacy_headers()).get_response(timeout=10)
        session_id = dict(response["headers"])[b"mcp-session-id"].decode()

    async def one(request_id: int) -> None:
        if era == "modern":
            communicator = call(application, request_id, tool)
        else:
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                    "params": {"name": tool, "arguments": {"text": "hi"}}}
            communicator = HttpCommunicator(application, "POST", "/mcp", json.dumps(body).encode(),
                                            legacy_headers(session_id))
        response = await communicator.get_response(timeout=10)
        assert response["status"] == 200, response["body"]
        # As a server does: the application ends by itself (a dropped communicator cancels it,
        # which no server does to an answered request).
        await communicator.wait(timeout=10)

    for request_id in range(1, 4):  # warm-up: lazily built validators, caches
        await one(request_id)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for request_id in range(10, 30):
            await one(request_id)
        await asyncio.sleep(0.1)  # legacy request tasks end after their answer is sent
        gc.collect()
        left = [type(obj).__name__ for obj in gc.garbage if isinstance(obj, (McpHttpConsumer, RequestContext))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


# The request's thread-sensitive context ----------------------------------------------------------


class ThreadRecordingDispatcher:
    """Answers each request after running ``work`` as thread-sensitive sync code (the async ORM's way)."""

    def __init__(self, work=None) -> None:
        self.work = work or (lambda request_id: None)
        self.threads: dict[int, threading.Thread] = {}
        self.backend = self  # observers of request_served hear of each request with the site as sender

    async def handle_request(self, message, ctx):
        def run() -> None:
            self.threads[message["id"]] = threading.current_thread()
            self.work(message["id"])

        await sync_to_async(run)()  # thread_sensitive=True, asgiref's default
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}


def bare_request(request_id: int):
    from django_mcp.protocol.context import RequestContext
    from django_mcp.protocol.versions import Era

    message = {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
    return message, RequestContext(era=Era.MODERN, protocol_version=MODERN)


async def test_thread_sensitive_code_of_two_requests_runs_side_by_side():
    # Request 1's thread-sensitive code waits until request 2's has run: on one shared thread
    # (no context per request) request 2 could never start and both would time out.
    from django_mcp.transports.requests import serve_request

    second_ran = threading.Event()

    def work(request_id: int) -> None:
        if request_id == 1:
            assert second_ran.wait(timeout=10), "request 2 never ran beside request 1"
        else:
            second_ran.set()

    dispatcher = ThreadRecordingDispatcher(work)
    first = asyncio.ensure_future(serve_request(dispatcher, *bare_request(1)))
    await asyncio.sleep(0.1)
    assert (await asyncio.wait_for(serve_request(dispatcher, *bare_request(2)), 10))["id"] == 2
    assert (await asyncio.wait_for(first, 10))["id"] == 1
    assert dispatcher.threads[1] is not dispatcher.threads[2]


async def test_a_requests_thread_ends_with_it_and_its_context_is_left():
    from django_mcp.transports.requests import serve_request

    dispatcher = ThreadRecordingDispatcher()
    await serve_request(dispatcher, *bare_request(1))
    # Ended (joined) before the request's answer is returned, not later by the collector.
    assert not dispatcher.threads[1].is_alive()
    assert SyncToAsync.thread_sensitive_context.get(None) is None
    assert len(SyncToAsync.context_to_thread_executor) == 0


async def test_a_request_that_made_no_thread_leaves_its_context_too():
    from django_mcp.transports.requests import serve_request

    class Plain:
        backend = None  # set below: the site observers of request_served hear of

        async def handle_request(self, message, ctx):
            assert SyncToAsync.thread_sensitive_context.get(None) is not None
            return {"jsonrpc": "2.0", "id": message["id"], "result": {}}

    dispatcher = Plain()
    dispatcher.backend = dispatcher
    await serve_request(dispatcher, *bare_request(1))
    assert SyncToAsync.thread_sensitive_context.get(None) is None


async def test_an_outer_thread_sensitive_context_is_kept():
    # As with asgiref's own context manager, only the outermost context counts: requests served
    # inside one share its thread, and leaving them does not end it.
    from django_mcp.transports.requests import serve_request

    dispatcher = ThreadRecordingDispatcher()
    async with ThreadSensitiveContext() as outer:
        await serve_request(dispatcher, *bare_request(1))
        await serve_request(dispatcher, *bare_request(2))
        assert dispatcher.threads[1] is dispatcher.threads[2]
        assert SyncToAsync.thread_sensitive_context.get(None) is outer
        assert outer in SyncToAsync.context_to_thread_executor
