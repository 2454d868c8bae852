"""
Raw HTTP/1.1 over a plain socket, for faults ``http.client`` cannot make: a body that stops
half-way, a connection closed right after the request, a reader that never reads.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import Any

from tests.faults.harness import reset
from tests.live import LiveServer

TIMEOUT = 10.0


def connect(server: LiveServer, *, receive_buffer: int | None = None) -> socket.socket:
    """A connected socket with a timeout; ``receive_buffer`` shrinks the kernel's receive buffer."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:
        # Before connect(): the window the client advertises is fixed at the handshake.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(TIMEOUT)
    sock.connect((server.host, server.port))
    return sock


def head(server: LiveServer, method: str, target: str, headers: Mapping[str, str], length: int | None) -> bytes:
    """The request line and headers; ``Content-Length`` as given (it may promise more than is sent)."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {server.host_header}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def post(server: LiveServer, message: Any, headers: Mapping[str, str], *, target: str = "/mcp",
         receive_buffer: int | None = None) -> socket.socket:
    """Send a whole JSON POST and return the socket, its response unread."""
    body = json.dumps(message).encode()
    sock = connect(server, receive_buffer=receive_buffer)
    sock.sendall(head(server, "POST", target, {"Content-Type": "application/json",
                                               "Accept": "application/json, text/event-stream", **headers},
                      len(body)) + body)
    return sock


def post_partial(server: LiveServer, message: Any, headers: Mapping[str, str], *, sent: int,
                 target: str = "/mcp") -> socket.socket:
    """Promise the whole body in ``Content-Length`` but send only its first ``sent`` bytes."""
    body = json.dumps(message).encode()
    sock = connect(server)
    sock.sendall(head(server, "POST", target, {"Content-Type": "application/json",
                                               "Accept": "application/json, text/event-stream", **headers},
                      len(body)) + body[:sent])
    return sock


def read_some(sock: socket.socket, at_least: bytes) -> bytes:
    """Read until ``at_least`` has been seen (or the peer closes); what was read."""
    data = b""
    while at_least not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


__all__ = ["connect", "head", "post", "post_partial", "read_some", "reset"]
