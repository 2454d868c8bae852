"""
The cold-session baseline (benchmarks/README.md): a bare Channels ``AsyncConsumer`` answering the
five steps of a cold session (``cold.py``) with fixed bodies, as ``baseline_asgi.py`` answers one
tools/call.

It routes each request by a byte search of its body, the least that tells the steps apart, and
names every session with a fresh random id, as any server must. Its answers carry what the cold
client checks and are about as long as django_mcp's (184, 0, 240, 91 and 0 bytes). Stock
Channels, no channel layer, no database: what five requests on one keep-alive connection cost on
this ASGI server in a stock Channels consumer before any MCP work. (``plain_cold_asgi.py`` gives the
same answers without a consumer: the server's own floor.)

Serve it with ``daphne benchmarks.baseline_cold_asgi:application`` or
``uvicorn benchmarks.baseline_cold_asgi:application --lifespan off``.
"""

import secrets

# baseline_asgi.py configures the minimal settings Channels needs to be imported, and imports it.
from benchmarks.baseline_asgi import AsyncConsumer, StopConsumer
from benchmarks.cold_answers import CALL, INITIALIZE, TOOLS, json_headers


class BaselineColdConsumer(AsyncConsumer):
    """One HTTP request of a cold session: a fixed answer per step, a new session id per initialize."""

    async def http_request(self, message):
        if message.get("more_body", False):
            return  # answer after the body's last event
        body = message.get("body", b"")
        if self.scope["method"] == "DELETE":
            await self.answer(200, [(b"content-length", b"0")], b"")
        elif b'"initialize"' in body:
            await self.answer(200, [*json_headers(INITIALIZE), (b"mcp-session-id", secrets.token_hex(16).encode())],
                              INITIALIZE)
        elif b"notifications/initialized" in body:
            await self.answer(202, [(b"content-length", b"0")], b"")
        elif b'"tools/list"' in body:
            await self.answer(200, json_headers(TOOLS), TOOLS)
        else:
            await self.answer(200, json_headers(CALL), CALL)
        raise StopConsumer()

    async def answer(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        await self.send({"type": "http.response.start", "status": status, "headers": headers})
        await self.send({"type": "http.response.body", "body": body, "more_body": False})

    async def http_disconnect(self, message):
        raise StopConsumer()


application = BaselineColdConsumer.as_asgi()
