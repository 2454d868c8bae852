"""
Writing a stream's events (django_mcp/transports/responding.py): events that wait for a stream
together go out together, in one ASGI message (one write to the socket), and nothing waits when
nothing is behind.
"""

import asyncio
from typing import Any

from django_mcp.fanout import NOTIFY
from django_mcp.transports.base import _Finished
from django_mcp.transports.http import McpHttpConsumer


def notification(n: int) -> dict[str, Any]:
    return {"type": NOTIFY, "message": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                                        "params": {"_meta": {"n": n}}}}


def events_in(body: bytes) -> list[int]:
    """The ``n`` of each event in a body, in order."""
    return [int(part.split(b'"n":', 1)[1].split(b"}", 1)[0]) for part in body.split(b"\n\n") if part]


class SlowSocket:
    """An ASGI send whose writes each wait until the test lets them through, as a busy socket would."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self, message: dict[str, Any]) -> None:
        await self.gate.wait()
        if message["type"] == "http.response.body":
            self.bodies.append(message["body"])


def open_stream(socket: SlowSocket, **state: Any) -> McpHttpConsumer:
    """A consumer whose SSE response has started, writing to ``socket`` (no channel layer)."""
    consumer = McpHttpConsumer()
    consumer.channel_layer, consumer.groups = None, set()
    consumer.base_send, consumer._send_lock, consumer.finished = socket, asyncio.Lock(), _Finished()
    consumer.response_started = consumer.sse_started = True
    consumer.resumable = False
    for name, value in state.items():
        setattr(consumer, name, value)
    return consumer


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_session_streams_waiting_events_go_out_in_one_write():
    socket = SlowSocket()
    consumer = open_stream(socket, session_stream=True)
    consumer.receive_shared(notification(1))
    await settle()
    assert [events_in(body) for body in socket.bodies] == [[1]]  # nothing behind it: written at once

    socket.gate.clear()  # the next write waits on the socket ...
    consumer.receive_shared(notification(2))
    await settle()
    for n in (3, 4, 5):  # ... while three more arrive
        consumer.receive_shared(notification(n))
    socket.gate.set()
    await settle()
    assert [events_in(body) for body in socket.bodies] == [[1], [2], [3, 4, 5]]
    assert consumer._held_sse is None  # nothing left held back

    consumer.receive_shared(notification(6))  # alone again: at once
    await settle()
    assert [events_in(body) for body in socket.bodies][-1] == [6]


async def test_a_listen_streams_waiting_notifications_go_out_in_one_write_and_before_its_end():
    socket = SlowSocket()
    consumer = open_stream(socket)
    notifications = await consumer.listen({"toolsListChanged": True})

    async def relay() -> None:  # what the subscriptions/listen handler does with them
        async for message in notifications:
            await consumer.stream_message(message)
        await consumer.stream_message({"jsonrpc": "2.0", "id": 9, "result": {"_meta": {"n": 99}}})
        await consumer.end_sse()

    relaying = asyncio.ensure_future(relay())
    consumer.queue_for_listener(notification(1)["message"])
    await settle()
    assert [events_in(body) for body in socket.bodies] == [[1]]
    for n in (2, 3, 4):
        consumer.queue_for_listener(notification(n)["message"])
    await settle()
    assert [events_in(body) for body in socket.bodies] == [[1], [2, 3, 4]]
    consumer.queue_for_listener(notification(5)["message"])
    consumer.listen_queue.put_nowait(None)  # the subscription ends with a notification still waiting
    await asyncio.wait_for(relaying, 5)
    assert [events_in(body) for body in socket.bodies] == [[1], [2, 3, 4], [5, 99], []]
