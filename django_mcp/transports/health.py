"""
Liveness and readiness for load balancers, Kubernetes probes and service managers, served by
``django_mcp.asgi.application`` beside the MCP endpoints:

- ``GET /healthz`` (``DJANGO_MCP["HEALTH_PATH"]``): 200 ``{"status": "ok"}`` as long as the
  worker's event loop answers. It touches nothing else, so a busy database never gets a live
  worker restarted.
- ``GET /readyz`` (``DJANGO_MCP["READINESS_PATH"]``): 200 ``{"status": "ready", "checks": {...}}``
  when every database answers ``SELECT 1`` and the channel layer carries a message from this
  worker back to itself; otherwise 503 with ``"status": "unavailable"`` and what failed. A worker
  that cannot reach the database or the layer cannot serve sessions or announcements, so a
  balancer should send it no traffic until it can. Each check gives up after
  ``READINESS_TIMEOUT_SECONDS``.

Neither checks Host, Origin or credentials: probes address a worker by its IP, and the answers
say nothing but whether it is up (the failure names a check and an exception class, never a
message that could carry a host name or a password). ``HEAD`` gets the same status without a body.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from channels.layers import get_channel_layer
from django.db import connections

from ..threads import in_thread


#: How long one readiness check may take before it counts as failed.
READINESS_TIMEOUT_SECONDS = 2.0


def _ping_databases() -> None:
    for connection in connections.all(initialized_only=False):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")


async def check_database() -> None:
    """Every configured database answers ``SELECT 1`` (on a worker thread: the driver blocks)."""
    await in_thread(_ping_databases)()


async def check_channel_layer() -> None:
    """The channel layer carries a message from this worker back to itself (nothing to do without one)."""
    layer = get_channel_layer()
    if layer is None:
        return
    channel = await layer.new_channel()
    token = uuid.uuid4().hex
    await layer.send(channel, {"type": "mcp.health", "token": token})
    message = await layer.receive(channel)
    if message.get("token") != token:
        raise RuntimeError("the channel layer answered with another message")


CHECKS = {"database": check_database, "channel_layer": check_channel_layer}


async def readiness() -> tuple[bool, dict[str, str]]:
    """Run every check at once; (all passed, check name → ``"ok"`` or what failed)."""

    async def run(check: Any) -> str:
        try:
            await asyncio.wait_for(check(), READINESS_TIMEOUT_SECONDS)
        except TimeoutError:
            return f"timed out after {READINESS_TIMEOUT_SECONDS:g} s"
        except Exception as exc:  # any failure is the answer, never a 500
            return f"failed: {type(exc).__name__}"
        return "ok"

    names = list(CHECKS)
    results = await asyncio.gather(*(run(CHECKS[name]) for name in names))
    outcome = dict(zip(names, results, strict=True))
    return all(result == "ok" for result in results), outcome


async def _respond(send: Any, status: int, body: dict[str, Any], *, head: bool) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"cache-control", b"no-store"),
        (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": b"" if head else payload})


def health_app(kind: str) -> Any:
    """The ASGI app of ``/healthz`` (``kind="liveness"``) or ``/readyz`` (``kind="readiness"``)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        method = scope.get("method", "GET")
        if method not in ("GET", "HEAD"):
            payload = b'{"error": "method not allowed"}'
            await send({"type": "http.response.start", "status": 405, "headers": [
                (b"allow", b"GET, HEAD"), (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode())]})
            await send({"type": "http.response.body", "body": payload})
            return
        if kind == "liveness":
            await _respond(send, 200, {"status": "ok"}, head=method == "HEAD")
            return
        ready, checks = await readiness()
        await _respond(send, 200 if ready else 503, {"status": "ready" if ready else "unavailable",
                                                     "checks": checks}, head=method == "HEAD")

    return app
