"""
One plain HTTP request to an ASGI application in process, for endpoints that answer in one body
(``/healthz``, ``/readyz``, ``/metrics``): the status, the headers and the body.
"""

from __future__ import annotations

from typing import Any

from asgiref.testing import ApplicationCommunicator


async def request(app: Any, path: str, method: str = "GET", host: bytes = b"10.0.0.7:8000",
                  headers: list[tuple[bytes, bytes]] | tuple = ()) -> tuple[int, dict, bytes]:
    """``method path`` with ``Host: host`` (a worker's own address by default) and ``headers``."""
    scope = {"type": "http", "http_version": "1.1", "method": method, "scheme": "http", "path": path,
             "raw_path": path.encode(), "root_path": "", "query_string": b"", "server": ("10.0.0.7", 8000),
             "client": ("10.0.0.1", 50000), "headers": [(b"host", host), *headers]}
    communicator = ApplicationCommunicator(app, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(10)
    body = (await communicator.receive_output(10)).get("body", b"")
    await communicator.wait(5)
    return start["status"], dict(start["headers"]), body
