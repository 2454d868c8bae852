"""
The 2024-11-05 HTTP+SSE check against a stand-in server with one fault per path: a stream that
stays silent (a buffering proxy), a message URL that 404s (a path prefix the server does not know)
or names another host, and a POST accepted whose answer never reaches the stream. And a card that
is not JSON (a catch-all page).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from django_mcp.doctor.card import check_server_card
from django_mcp.doctor.findings import FAIL
from django_mcp.doctor.sse import check_sse
from django_mcp.doctor.visit import Visit


#: The first event each stream sends (None: none at all).
ENDPOINT_EVENTS = {
    "/silent/sse": None,
    "/prefix/sse": "/messages/?session_id=1",  # the proxy serves the app under /prefix, which the server leaves out
    "/foreign/sse": "https://elsewhere.invalid/messages/?session_id=1",
    "/mute/sse": "/mute/messages/?session_id=1",
}


class StandIn(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/mcp/server-card":
            self.answer(200, "text/html", b"<html>Welcome</html>")
        elif self.path in ENDPOINT_EVENTS:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            if (data := ENDPOINT_EVENTS[self.path]) is not None:
                self.wfile.write(f": hello\n\nevent: endpoint\ndata: {data}\n\n".encode())
                self.wfile.flush()
            time.sleep(2)  # held open, as a stream is, past the doctor's timeout
        else:
            self.answer(404, "text/plain", b"Not Found")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/mute/messages/"):
            self.answer(202, "text/plain", b"Accepted")  # and nothing ever arrives on the stream
        else:
            self.answer(404, "text/plain", b"Not Found")

    def answer(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def check(stand_in: str, path: str) -> tuple[str, str, str, str]:
    finding = check_sse(Visit(f"{stand_in}/mcp", sse_url=stand_in + path, timeout=0.5))
    return finding.status, finding.fault, finding.seen, finding.fix


def test_a_silent_stream_is_named_with_the_buffering_hint(stand_in: str) -> None:
    status, fault, seen, fix = check(stand_in, "/silent/sse")
    assert (status, fault) == (FAIL, "no endpoint event")
    assert "nothing within 0.5 s" in seen and "proxy_buffering off" in fix


def test_a_message_url_without_the_path_prefix_is_named(stand_in: str) -> None:
    status, fault, seen, fix = check(stand_in, "/prefix/sse")
    assert (status, fault) == (FAIL, "endpoint URL wrong")
    assert "POST /messages/ answers HTTP 404" in seen
    assert "path prefix (/prefix)" in fix and "--root-path" in fix


def test_a_message_url_on_another_host_is_named(stand_in: str) -> None:
    status, fault, seen, _ = check(stand_in, "/foreign/sse")
    assert (status, fault) == (FAIL, "endpoint URL wrong")
    assert "https://elsewhere.invalid/messages/" in seen


def test_an_answer_that_never_reaches_the_stream_is_named(stand_in: str) -> None:
    status, fault, seen, fix = check(stand_in, "/mute/sse")
    assert (status, fault) == (FAIL, "SSE answer missing")
    assert "answered HTTP 202" in seen and "channel layer" in fix


def test_a_card_that_is_not_json_is_named(stand_in: str) -> None:
    finding = check_server_card(Visit(f"{stand_in}/mcp"))
    assert (finding.status, finding.fault) == (FAIL, "card not JSON")
    assert "text/html" in finding.seen
