"""
The baseline of the benchmarks (benchmarks/README.md): a bare Channels ``AsyncConsumer`` on the same ASGI server.

It does the least an HTTP consumer can do for a tools/call: read the POST body to its end and
answer a fixed JSON-RPC result as long as django_mcp's answer to the same call (208 bytes for the
2026-07-28 echo call, so the servers write the same number of bytes; ``run.py`` passes django_mcp's
actual body in ``BENCH_BASELINE_RESPONSE`` so a change in ours keeps the sizes equal). A GET opens
an idle SSE stream (one comment, then nothing until the client leaves), the memory counterpart of
django_mcp's legacy GET stream.

It is deliberately *stock* Channels: ``AsyncConsumer.dispatch`` still hops to a thread for
``aclose_old_connections()`` before every message, because that is what "a bare Channels consumer"
costs. No channel layer is configured (a consumer without one opens no channel per request, as
django_mcp does not for plain requests), so the baseline is the ceiling, not a straw man.

Serve it with ``daphne benchmarks.baseline_asgi:application`` or
``uvicorn benchmarks.baseline_asgi:application --lifespan off``.
"""

import os

from django.conf import settings

# Channels imports Django's database layer, which needs settings. Minimal ones: no apps, no
# database (``close_old_connections`` then walks an empty list, as it would for a project whose
# connections are not open), no channel layer.
if not settings.configured and not os.environ.get("DJANGO_SETTINGS_MODULE"):
    settings.configure(DATABASES={}, INSTALLED_APPS=[], USE_TZ=True)

# Only now, once settings exist.
from channels.consumer import AsyncConsumer
from channels.exceptions import StopConsumer

DEFAULT_RESPONSE = (
    b'{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":'
    b'{"name":"django-mcp-tests","version":"0.1.0"}},"content":[{"text":"hi","type":"text"}],'
    b'"isError":false,"resultType":"complete"}}'
)
RESPONSE = os.environ.get("BENCH_BASELINE_RESPONSE", "").encode() or DEFAULT_RESPONSE
JSON_HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(RESPONSE)).encode())]
SSE_HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]


class BaselineConsumer(AsyncConsumer):
    """One HTTP request: POST → the fixed JSON answer; GET → an SSE stream that stays idle."""

    async def http_request(self, message):
        if self.scope["method"] == "GET":
            # Headers and one comment, then hold the stream: the consumer waits in
            # AsyncConsumer's receive loop until http.disconnect, like an idle MCP GET stream.
            await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            await self.send({"type": "http.response.body", "body": b": ok\n\n", "more_body": True})
            return
        # The body may come in several events; answer after the last one.
        if message.get("more_body", False):
            return
        await self.send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
        await self.send({"type": "http.response.body", "body": RESPONSE, "more_body": False})
        raise StopConsumer()

    async def http_disconnect(self, message):
        raise StopConsumer()


application = BaselineConsumer.as_asgi()
