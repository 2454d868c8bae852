"""
A proxy that buffers: each answer reaches the client only once it is complete, as nginx with
``proxy_buffering on`` (and ``X-Accel-Buffering`` ignored) or a buffering CDN delivers it. One
connection per request: the relay asks the server to close after answering, then passes it all on.
"""

from __future__ import annotations

import socket
import threading
from typing import Self


class BufferingRelay:
    """Listens on 127.0.0.1:``port`` and relays to 127.0.0.1:``upstream``, holding each answer back until it ends."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.listener.close()

    def serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self.relay, args=(client,), daemon=True).start()

    def relay(self, client: socket.socket) -> None:
        with client, socket.create_connection(("127.0.0.1", self.upstream)) as server:
            threading.Thread(target=self.forward_request, args=(client, server), daemon=True).start()
            answer = bytearray()
            while chunk := server.recv(65536):
                answer += chunk
            client.sendall(answer)

    @staticmethod
    def forward_request(client: socket.socket, server: socket.socket) -> None:
        first = True
        try:
            while chunk := client.recv(65536):
                if first:
                    # The server closes the connection after its answer: the end of the answer is then the EOF.
                    chunk = chunk.replace(b"\r\n", b"\r\nConnection: close\r\n", 1)
                    first = False
                server.sendall(chunk)
        except OSError:
            pass
