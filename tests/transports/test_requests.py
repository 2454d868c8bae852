"""Each request's sync work runs on a thread of its own (transports/requests.py)."""

import asyncio
import json
import threading

import pytest
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
