"""
Fuzzing a real daphne server over real sockets (``live_server_mcp``, ``tests/live.py``): fuzzed
MCP requests in well-formed HTTP, and HTTP that is itself malformed (request lines, header lines,
framing, lengths that lie). After every case the server must go on serving others: a legacy
session opened before the first case still answers, and so does a fresh 2026-07-28 request.

Invariant: well-formed requests get what ``checks.check_http_answer`` allows; malformed ones, and
requests with a header value daphne refuses (:func:`refused_by_daphne`), get no 5xx (daphne may
refuse them itself, in its own words) or a closed connection; no exchange takes longer than
``TIMEOUT``.
"""

import http.client
import json
import socket
from typing import Any

from daphne.utils import INVALID_HEADER_VALUE_BYTES
from hypothesis import given
from hypothesis import strategies as st

from .checks import check_http_answer, check_response, require
from .counting import count
from .http_strategies import damaged_base, encode_body, modern_headers, raw_bodies
from .profiles import fuzz_settings
from .strategies import legacy_messages, modern_messages, weighted

TIMEOUT = 10.0
# A stream that stays open (GET /sse) is read this long, then let go of.
HOLD_SECONDS = 0.5
MALFORMED_WAIT = 1.0


def http_bytes(method: bytes, path: bytes, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """A well-formed HTTP/1.1 request with an honest Content-Length."""
    lines = [method + b" " + path + b" HTTP/1.1"]
    lines += [name + b": " + value for name, value in headers if name not in (b"content-length", b"connection")]
    lines += [b"Content-Length: " + str(len(body)).encode(), b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def exchange(server: Any, data: bytes, *, malformed: bool = False) -> tuple[int, dict[bytes, bytes], bytes] | None:
    """
    Send ``data`` on a fresh connection; the response, or None when the server closed without one.
    A well-formed request must be answered within :data:`TIMEOUT`; a malformed one may also get
    no answer (a Content-Length that promises more leaves the server waiting, as HTTP says it
    should) and is let go of after :data:`MALFORMED_WAIT`. A stream is read for
    :data:`HOLD_SECONDS` and let go of.
    """
    with socket.create_connection((server.host, server.port), timeout=TIMEOUT) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # the server may answer and close before reading everything
        if malformed:
            sock.settimeout(MALFORMED_WAIT)
        response = http.client.HTTPResponse(sock, method="GET")
        try:
            response.begin()
        except (http.client.RemoteDisconnected, ConnectionResetError, http.client.BadStatusLine):
            return None
        except TimeoutError:
            if malformed:
                return None
            raise AssertionError(f"no answer within {TIMEOUT} s to {data[:300]!r}") from None
        headers = {name.lower().encode("latin-1"): value.encode("latin-1") for name, value in response.getheaders()}
        if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            sock.settimeout(HOLD_SECONDS)
            try:
                body = response.read1(65536)
            except TimeoutError:
                body = b""
            return response.status, headers, body
        try:
            return response.status, headers, response.read()
        except http.client.IncompleteRead as exc:
            return response.status, headers, exc.partial


def refused_by_daphne(data: bytes) -> bool:
    """
    Whether a header value holds a byte daphne refuses itself, with its own HTML 400, before the
    application sees the request (its guard against header splitting). The in-process tests send
    such values to django_mcp directly.
    """
    head = data.split(b"\r\n\r\n", 1)[0]
    return any(not INVALID_HEADER_VALUE_BYTES.isdisjoint(line.partition(b":")[2]) for line in head.split(b"\r\n")[1:])


def mcp_requests() -> st.SearchStrategy[bytes]:
    """Fuzzed MCP in well-formed HTTP: modern requests with their headers, legacy ones, raw bodies."""
    def modern(message: Any) -> st.SearchStrategy[bytes]:
        return st.builds(lambda base, mirrored: http_bytes(b"POST", b"/mcp", [*base, *mirrored], encode_body(message)),
                         damaged_base(), modern_headers(message))

    others = st.builds(http_bytes, st.sampled_from([b"POST", b"POST", b"GET", b"DELETE"]),
                       st.sampled_from([b"/mcp", b"/messages/?session_id=0", b"/sse"]), damaged_base(),
                       weighted((2, legacy_messages().map(encode_body)), (1, raw_bodies())))
    return weighted((3, modern_messages().flatmap(modern)), (2, others))


def malformed_requests() -> st.SearchStrategy[bytes]:
    """HTTP that is wrong as HTTP: what daphne (and django_mcp behind it) must survive."""
    fixed = st.sampled_from([
        b"\r\n\r\n", b"GARBAGE\r\n\r\n", b"POST /mcp HTTP/9.9\r\n\r\n", b"POST  /mcp HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{}",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n{}",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColonHere\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n folded: header\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n",
        b"POST /%00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"POST /mcp\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    ])
    return weighted((2, fixed), (1, st.binary(max_size=200)),
                    (1, st.builds(lambda head, tail: head + tail, fixed, st.binary(max_size=60))))


def still_serving(server: Any, session: bytes, number: int) -> None:
    """The session opened before the fuzzing still answers, and so does a new stateless request."""
    ping = {"jsonrpc": "2.0", "id": f"alive-{number}", "method": "ping"}
    headers = [(b"host", server.host_header.encode()), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"), (b"mcp-session-id", session)]
    answer = exchange(server, http_bytes(b"POST", b"/mcp", headers, encode_body(ping)))
    require(answer is not None and answer[0] == 200, "the open session stopped answering", answer)
    check_response(json.loads(answer[2]), f"alive-{number}", era="legacy")
    call = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "alive"},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}
    modern = [*headers[:3], (b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"),
              (b"mcp-name", b"echo")]
    answer = exchange(server, http_bytes(b"POST", b"/mcp", modern, encode_body(call)))
    require(answer is not None and answer[0] == 200, "a new request was not served", answer)
    result = check_response(json.loads(answer[2]), number, era="modern")["result"]
    require(result["content"][0]["text"] == "alive", "echo answered something else", result)


def open_session(server: Any) -> bytes:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}
    headers = [(b"host", server.host_header.encode()), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream")]
    answer = exchange(server, http_bytes(b"POST", b"/mcp", headers, encode_body(init)))
    assert answer is not None and answer[0] == 200, answer
    return answer[1][b"mcp-session-id"]


def test_live_server_survives_fuzzed_requests(live_server_mcp: Any) -> None:
    server = live_server_mcp
    session = open_session(server)

    @fuzz_settings("live")
    @given(case=weighted((3, st.tuples(st.just("mcp"), mcp_requests())),
                         (1, st.tuples(st.just("malformed"), malformed_requests()))))
    def fuzz(case: tuple[str, bytes]) -> None:
        number = count("live")
        kind, data = case
        answer = exchange(server, data, malformed=kind == "malformed")
        if answer is not None:
            status, headers, body = answer
            if (kind == "mcp" and not refused_by_daphne(data)
                    and not headers.get(b"content-type", b"").startswith(b"text/event-stream")):
                check_http_answer(status, headers, body)
            else:
                require(status < 500, f"HTTP status {status}", (data[:200], body[:300]))
        still_serving(server, session, number)

    fuzz()
