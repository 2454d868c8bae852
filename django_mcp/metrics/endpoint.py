"""
``GET /metrics``: this worker's metrics in the format the scraper asks for (Prometheus text, or
OpenMetrics when its ``Accept`` header prefers it). With ``DJANGO_MCP["METRICS_BEARER_TOKEN"]`` set,
only a request carrying ``Authorization: Bearer <token>`` gets them (RFC 6750 section 2.1;
Prometheus's ``authorization`` scrape option sends it). Served like ``/healthz``, before Django's
URL routing and whatever the Host: keep the path off the public proxy (the deployment guide's
nginx configuration refuses it).
"""

import hmac
from typing import Any

from prometheus_client import REGISTRY
from prometheus_client.exposition import choose_encoder

from ..conf import mcp_settings


async def _respond(send: Any, status: int, body: bytes, content_type: bytes,
                   extra: list[tuple[bytes, bytes]] | None = None, *, head: bool = False) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", content_type), (b"cache-control", b"no-store"),
        (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": b"" if head else body})


def _authorized(scope: dict[str, Any]) -> bool:
    token = mcp_settings.METRICS_BEARER_TOKEN
    if not token:
        return True
    presented = b""
    for name, value in scope.get("headers") or ():
        if name.lower() == b"authorization":
            presented = value
    expected = b"Bearer " + str(token).encode()
    return hmac.compare_digest(presented, expected)


async def metrics_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The ASGI app of the metrics endpoint."""
    method = scope.get("method", "GET")
    if method not in ("GET", "HEAD"):
        await _respond(send, 405, b'{"error": "method not allowed"}', b"application/json", [(b"allow", b"GET, HEAD")])
        return
    if not _authorized(scope):
        await _respond(send, 401, b'{"error": "a bearer token is required"}', b"application/json",
                       [(b"www-authenticate", b'Bearer realm="metrics"')])
        return
    accept = ""
    for name, value in scope.get("headers") or ():
        if name.lower() == b"accept":
            accept = value.decode("latin-1")
    encoder, content_type = choose_encoder(accept)
    # Rendering is quick (tens of series) and CPU only: no thread needed.
    await _respond(send, 200, encoder(REGISTRY), content_type.encode("latin-1"), head=method == "HEAD")
