"""
The floor of ``benchmarks/delivery.py``: a plain ASGI app (no Django, no Channels, no Redis) that
holds the same streams as django_mcp and pushes ``notifications/tools/list_changed`` to every open
one from memory, in one process. Served by uvicorn (``benchmarks.servers.Server``, pinned like the
workers), it is what the same client, listeners and triggers cost on this machine when the server
does next to nothing: the ratio p99 / floor p99 is the part of the latency the framework adds.

It answers just what ``delivery.py``'s listeners and triggers send, with the framing
``delivery_clients.py`` parses:

- ``POST initialize`` (2025-11-25): a JSON result and an ``Mcp-Session-Id``;
- ``POST notifications/initialized``: 202;
- ``GET`` with ``Accept: text/event-stream``: the legacy stream, held open;
- ``POST subscriptions/listen`` (2026-07-28): an SSE stream that starts with
  ``notifications/subscriptions/acknowledged`` and is held open;
- ``POST tools/call`` (any tool): queues one ``notifications/tools/list_changed`` on every open
  stream, then answers a JSON result with ``isError: false``;
- ``DELETE``: 200;
- ``GET /sse`` (2024-11-05 HTTP+SSE, for ``benchmarks/burst.py``): a stream whose first event,
  ``endpoint``, names ``/messages/?session_id=<hex>``; ``POST`` there answers 202 and sends the
  ``initialize`` result on that stream, as django_mcp does; an unknown session gets 404.

A stream's first bytes go out with its head (a comment where django_mcp sends its first keep-alive):
daphne writes the response head only with the first body bytes, so a stream without them would
never look open. Every stream pre-encodes its own event (the modern one carries its subscription id in ``_meta``,
as django_mcp's does), so a push is a queue put per stream and one ``send`` by each stream's own
coroutine: an in-process fan-out with nothing left to save.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

LIST_CHANGED = "notifications/tools/list_changed"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
SSE_HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache, no-transform"),
               (b"x-accel-buffering", b"no")]
JSON_HEADERS = [(b"content-type", b"application/json")]

_streams: set[asyncio.Queue[bool]] = set()
# HTTP+SSE session id → what its POSTs answer on its stream
_sse_sessions: dict[str, asyncio.Queue[bytes]] = {}


def _event(message: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(message, separators=(",", ":")).encode() + b"\n\n"


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _answer(send: Any, status: int, body: Any = None, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [*(JSON_HEADERS if data else []), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


async def _hold(receive: Any, send: Any, first: bytes, push: bytes) -> None:
    """An open stream: ``first`` now, then ``push`` per trigger, until the client goes away."""
    queue: asyncio.Queue[bool] = asyncio.Queue()

    async def watch() -> None:  # a separate task so the send loop needs no per-event select
        while (await receive())["type"] != "http.disconnect":
            pass
        queue.put_nowait(False)

    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    if first:
        await send({"type": "http.response.body", "body": first, "more_body": True})
    watcher = asyncio.create_task(watch())
    _streams.add(queue)
    try:
        while await queue.get():
            await send({"type": "http.response.body", "body": push, "more_body": True})
    except OSError:  # the client went away mid-write
        pass
    finally:
        _streams.discard(queue)
        watcher.cancel()


async def _sse_stream(receive: Any, send: Any) -> None:
    """``GET /sse``: the endpoint event, then whatever the session's POSTs answer, until the client goes away."""
    session_id = uuid.uuid4().hex
    answers: asyncio.Queue[bytes] = asyncio.Queue()
    _sse_sessions[session_id] = answers
    endpoint = f"event: endpoint\ndata: /messages/?session_id={session_id}\n\n".encode()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        answers.put_nowait(b"")

    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    await send({"type": "http.response.body", "body": endpoint, "more_body": True})
    watcher = asyncio.create_task(watch())
    try:
        while answer := await answers.get():
            await send({"type": "http.response.body", "body": answer, "more_body": True})
    except OSError:
        pass
    finally:
        _sse_sessions.pop(session_id, None)
        watcher.cancel()


async def _sse_message(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``POST /messages/?session_id=…``: 202, and an ``initialize`` answered on the session's stream."""
    session_id = scope.get("query_string", b"").decode().partition("session_id=")[2]
    message = json.loads(await _body(receive) or b"{}")
    answers = _sse_sessions.get(session_id)
    if answers is None:
        await _answer(send, 404)
        return
    await _answer(send, 202)
    if message.get("method") == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {},
                  "serverInfo": {"name": "delivery-floor", "version": "1.0"}}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        answers.put_nowait(b"event: message\n" + _event(answer))


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    method = scope["method"]
    if scope["path"].startswith("/sse"):
        await _sse_stream(receive, send)
        return
    if scope["path"].startswith("/messages"):
        await _sse_message(scope, receive, send)
        return
    if method == "GET":  # a legacy session's stream (django_mcp checks the session; a floor need not)
        await _hold(receive, send, b": open\n\n", _event({"jsonrpc": "2.0", "method": LIST_CHANGED}))
        return
    if method == "DELETE":
        await _answer(send, 200)
        return
    message = json.loads(await _body(receive) or b"{}")
    rpc = message.get("method")
    if rpc == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {"listChanged": True}},
                  "serverInfo": {"name": "delivery-floor", "version": "1.0"}}
        await _answer(send, 200, {"jsonrpc": "2.0", "id": message["id"], "result": result},
                      [(b"mcp-session-id", uuid.uuid4().hex.encode())])
    elif rpc == "notifications/initialized":
        await _answer(send, 202)
    elif rpc == "subscriptions/listen":
        meta = {SUBSCRIPTION_ID: message["id"]}
        ack = _event({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                      "params": {"_meta": meta, "notifications": message["params"].get("notifications", {})}})
        await _hold(receive, send, ack, _event({"jsonrpc": "2.0", "method": LIST_CHANGED, "params": {"_meta": meta}}))
    elif rpc == "tools/call":
        for queue in _streams:
            queue.put_nowait(True)
        await _answer(send, 200, {"jsonrpc": "2.0", "id": message["id"],
                                  "result": {"content": [{"type": "text", "text": "changed"}], "isError": False}})
    else:
        await _answer(send, 400, {"jsonrpc": "2.0", "id": message.get("id"),
                                  "error": {"code": -32601, "message": f"the floor does not answer {rpc}"}})
