"""One 2026-07-28 request through the real Streamable HTTP consumer, in process, as a keyed user."""

from __future__ import annotations

import json
from typing import Any

from channels.testing import HttpCommunicator

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


async def post(app: Any, method: str, params: dict[str, Any], key: str, name: str | None = None,
               ) -> tuple[int, dict[str, Any]]:
    """POST ``method`` with its mirrored headers and ``X-Api-Key: key``; the HTTP status and the JSON body."""
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", b"2026-07-28"),
               (b"mcp-method", method.encode()), (b"x-api-key", key.encode())]
    if name:
        headers.append((b"mcp-name", name.encode()))
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    communicator = HttpCommunicator(app, "POST", "/mcp", json.dumps(body).encode(), headers)
    try:
        response = await communicator.get_response(timeout=5)
    finally:
        communicator.stop(exceptions=False)
    return response["status"], json.loads(response["body"])
