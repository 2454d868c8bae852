"""
Bad input at the Streamable HTTP endpoint, over real sockets against a real daphne server.

Every test sends requests byte for byte with the standard library (``http.client``, or a raw
``socket`` where odd bytes are needed) to the session-wide ``live_server_mcp`` and asserts the exact
HTTP status and the JSON-RPC error (code, and id: null when the request could not be read, the
request's id otherwise), for both eras served at ``/mcp``:

- legacy sessions (``initialize`` → ``Mcp-Session-Id``), at 2025-11-25 and, where the rules differ
  (batches), at 2025-03-26 (MCP spec 2025-11-25, basic/transports#streamable-http);
- stateless 2026-07-28 requests carrying ``params._meta`` and the mirrored headers (MCP spec 2026-07-28, basic/transports/streamable-http).

After bad requests the server must keep serving, so each group ends with a good request, and no
response may take more than ``MAX_SECONDS`` (sockets time out after ``TIMEOUT`` seconds, so a hung
connection fails the test instead of hanging the suite).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import pytest


MODERN = "2026-07-28"
LEGACY = ("2025-03-26", "2025-11-25")
ERAS = (*LEGACY, MODERN)
TIMEOUT = 10.0  # socket timeout: a hung connection fails the test
MAX_SECONDS = 5.0  # no answer to bad input may take longer than this
LIMIT = 4 * 1024 * 1024  # DJANGO_MCP["MAX_REQUEST_BODY_SIZE"] default (tests.settings keeps it)
ACCEPT_BOTH = "application/json, text/event-stream"
CLIENT_INFO = {"name": "bad-input-tests", "version": "0"}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND_LEGACY = -32002
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

Headers = Mapping[str, "str | bytes | None"]


# --- helpers ---------------------------------------------------------------------------------


class Response(NamedTuple):
    """An HTTP answer: status, headers (lower-case names), and the JSON body or raw text."""

    status: int
    headers: dict[str, str]
    body: Any


def _encode(body: bytes | str | Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body).encode("utf-8")


def _read(resp: http.client.HTTPResponse, started: float) -> Response:
    raw = resp.read()
    elapsed = time.monotonic() - started
    assert elapsed < MAX_SECONDS, f"the answer took {elapsed:.1f} s"
    headers = {name.lower(): value for name, value in resp.getheaders()}
    content_type = headers.get("content-type", "")
    text = raw.decode("utf-8", errors="replace")
    body: Any = text
    if not raw:
        body = ""
    elif content_type.startswith("application/json"):
        body = json.loads(text)
    elif content_type.startswith("text/event-stream"):
        # The final JSON-RPC response of the stream (notifications before it are skipped).
        messages = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
        answers = [m for m in messages if "id" in m and ("result" in m or "error" in m)]
        body = answers[-1] if answers else messages
    return Response(resp.status, headers, body)


def request(server: Any, method: str, body: bytes | str | Any = b"", headers: Headers | None = None, *,
            conn: http.client.HTTPConnection | None = None, timeout: float = TIMEOUT) -> Response:
    """
    One HTTP request to ``/mcp``. ``headers`` override the defaults (Host, and for POST the
    Content-Type and Accept an MCP client sends); a value of None leaves that header out.
    """
    defaults: dict[str, str | bytes | None] = {"Host": server.host_header}
    if method == "POST":
        defaults.update({"Content-Type": "application/json", "Accept": ACCEPT_BOTH})
    merged = {name.lower(): (name, value) for name, value in defaults.items()}
    for name, value in (headers or {}).items():
        merged[name.lower()] = (name, value)
    data = _encode(body) if method == "POST" or body else b""
    own = conn is None
    conn = conn or http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    started = time.monotonic()
    try:
        conn.putrequest(method, "/mcp", skip_host=True, skip_accept_encoding=True)
        for name, value in merged.values():
            if value is not None:
                conn.putheader(name, value)
        if method == "POST" or data:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data or None)
        return _read(conn.getresponse(), started)
    finally:
        if own:
            conn.close()


def post(server: Any, body: bytes | str | Any, headers: Headers | None = None, **kwargs: Any) -> Response:
    """POST ``body`` (bytes as they are, anything else as JSON) to ``/mcp``."""
    return request(server, "POST", body, headers, **kwargs)


def raw_exchange(server: Any, data: bytes, *, timeout: float = TIMEOUT) -> Response:
    """Send exact bytes on a fresh socket and read one HTTP response (for what http.client won't send)."""
    started = time.monotonic()
    with socket.create_connection((server.host, server.port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before reading everything; read its answer
        resp = http.client.HTTPResponse(sock, method="POST")
        resp.begin()
        return _read(resp, started)


def raw_post(server: Any, body: bytes, headers: Headers | None = None, *, chunked: bool = False) -> bytes:
    """The bytes of a POST to ``/mcp``, with exactly the given headers after the defaults."""
    merged = {"host": ("Host", server.host_header), "content-type": ("Content-Type", "application/json"),
              "accept": ("Accept", ACCEPT_BOTH), "connection": ("Connection", "close")}
    for name, value in (headers or {}).items():
        merged[name.lower()] = (name, value)
    if chunked:
        merged["transfer-encoding"] = ("Transfer-Encoding", "chunked")
        step = 64 * 1024
        body = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + step]), body[i:i + step])
                        for i in range(0, len(body), step)) + b"0\r\n\r\n"
    else:
        merged.setdefault("content-length", ("Content-Length", str(len(body))))
    lines = [b"POST /mcp HTTP/1.1"]
    for name, value in merged.values():
        if value is not None:
            lines.append(name.encode() + b": " + (value if isinstance(value, bytes) else value.encode("latin-1")))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def modern_params(extra: Mapping[str, Any] | None = None, *, version: Any = MODERN,
                  capabilities: Any = None, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """``params`` of a 2026-07-28 request: ``extra`` plus the required ``_meta`` (minus ``drop``)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {} if capabilities is None else capabilities,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    for key in drop:
        meta.pop(f"io.modelcontextprotocol/{key}")
    return {**(extra or {}), "_meta": meta}


def modern_headers(method: str, name: str | bytes | None = None, *, version: str = MODERN) -> dict[str, Any]:
    """The request-metadata headers of a 2026-07-28 POST (MCP spec 2026-07-28, basic/transports/streamable-http)."""
    headers: dict[str, Any] = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def rpc(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def echo_call(request_id: Any = 1, text: str = "hi") -> dict[str, Any]:
    """A good 2026-07-28 ``tools/call`` of ``echo``."""
    return rpc("tools/call", modern_params({"name": "echo", "arguments": {"text": text}}), request_id)


def legacy_headers(session_id: str, version: str) -> dict[str, str]:
    """What a legacy client sends after ``initialize``; ``MCP-Protocol-Version`` from 2025-06-18 on."""
    headers = {"Mcp-Session-Id": session_id}
    if version != "2025-03-26":
        headers["MCP-Protocol-Version"] = version
    return headers


def legacy_session(server: Any, version: str) -> str:
    """Initialize a legacy session at ``version`` (and send ``initialized``); return its id."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
    status, headers, body = post(server, rpc("initialize", params, 0))
    assert status == 200, body
    assert body["result"]["protocolVersion"] == version
    session_id = headers["mcp-session-id"]
    status, _, _ = post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        legacy_headers(session_id, version))
    assert status == 202
    return session_id


def assert_error(resp: Response, status: int, code: int, request_id: Any) -> dict[str, Any]:
    """The response is HTTP ``status`` with a JSON-RPC error ``code`` for ``request_id``; returns the error."""
    assert resp.status == status, resp
    assert resp.headers.get("content-type", "").startswith("application/json"), resp
    body = resp.body
    assert isinstance(body, dict) and body.get("jsonrpc") == "2.0", resp
    assert "result" not in body, resp
    assert body["id"] == request_id, resp
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["code"] == code, resp
    return body["error"]


def assert_serving(server: Any) -> None:
    """The server still answers a good 2026-07-28 ``tools/call echo`` quickly."""
    status, _, body = post(server, echo_call(999, "still here"), modern_headers("tools/call", "echo"))
    assert status == 200, body
    assert body["id"] == 999
    assert body["result"]["content"][0]["text"] == "still here"
    assert server.running


class Era:
    """How a test speaks in one era: the headers a good request of that era carries."""

    def __init__(self, server: Any, version: str) -> None:
        self.server = server
        self.version = version
        self.modern = version == MODERN
        self.session_id = None if self.modern else legacy_session(server, version)

    def headers(self, method: str, name: str | None = None) -> dict[str, Any]:
        if self.modern:
            return modern_headers(method, name)
        assert self.session_id is not None
        return legacy_headers(self.session_id, self.version)

    def params(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return modern_params(extra) if self.modern else dict(extra or {})

    def call(self, method: str, extra: Mapping[str, Any] | None = None, *, name: str | None = None,
             request_id: Any = 1) -> Response:
        return post(self.server, rpc(method, self.params(extra), request_id), self.headers(method, name))

    def error_status(self, modern_status: int) -> int:
        """A JSON-RPC error's HTTP status: its own in 2026-07-28, 200 for legacy sessions (MCP spec 2026-07-28, basic/transports/streamable-http; MCP spec 2026-07-28, basic#error-codes)."""
        return modern_status if self.modern else 200


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest, live_server_mcp: Any) -> Era:
    return Era(live_server_mcp, request.param)


@pytest.fixture(params=LEGACY)
def legacy(request: pytest.FixtureRequest, live_server_mcp: Any) -> Era:
    return Era(live_server_mcp, request.param)


# --- unreadable bodies -------------------------------------------------------------------------


UNREADABLE = {
    "malformed-json": (b'{"jsonrpc": "2.0", "id": 1, "method": ', PARSE_ERROR),
    "trailing-garbage": (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"} xyz', PARSE_ERROR),
    "invalid-utf8": (b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', PARSE_ERROR),
    "empty": (b"", PARSE_ERROR),
    "whitespace": (b"  \r\n ", PARSE_ERROR),
    "string": (b'"tools/list"', INVALID_REQUEST),
    "number": (b"42", INVALID_REQUEST),
    "null": (b"null", INVALID_REQUEST),
    "true": (b"true", INVALID_REQUEST),
    "empty-object": (b"{}", INVALID_REQUEST),
}


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_unreadable_body_is_400_with_null_id(era: Era, case: str) -> None:
    """MCP spec basic#messages; 2025-11-25 basic/transports#streamable-http; basic#error-codes: unparsable JSON is 400/-32700, a non-object body 400/-32600, id null."""
    body, code = UNREADABLE[case]
    resp = post(era.server, body, era.headers("tools/call", "echo"))
    assert_error(resp, 400, code, None)


def test_unreadable_bodies_leave_the_server_serving(live_server_mcp: Any) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: after a run of unreadable bodies the server still answers."""
    for body, code in UNREADABLE.values():
        assert_error(post(live_server_mcp, body, modern_headers("tools/call", "echo")), 400, code, None)
    assert_serving(live_server_mcp)


# --- bad JSON-RPC envelopes --------------------------------------------------------------------


def _without(message: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != key}


# name -> (mutation of a good request with id 7, the id the error must carry)
ENVELOPES = {
    "jsonrpc-missing": (lambda m: _without(m, "jsonrpc"), 7),
    "jsonrpc-1.0": (lambda m: {**m, "jsonrpc": "1.0"}, 7),
    "jsonrpc-number": (lambda m: {**m, "jsonrpc": 2.0}, 7),
    "id-null": (lambda m: {**m, "id": None}, None),
    "id-object": (lambda m: {**m, "id": {"n": 7}}, None),
    "id-array": (lambda m: {**m, "id": [7]}, None),
    "id-bool": (lambda m: {**m, "id": True}, None),
    "id-float": (lambda m: {**m, "id": 7.5}, None),
    "params-list": (lambda m: {**m, "params": ["echo", {"text": "hi"}]}, 7),
    "params-string": (lambda m: {**m, "params": "echo"}, 7),
    "method-number": (lambda m: {**m, "method": 42}, 7),
    "method-null": (lambda m: {**m, "method": None}, 7),
    "method-missing": (lambda m: _without(m, "method"), 7),
}


@pytest.mark.parametrize("case", list(ENVELOPES))
def test_invalid_envelope_is_400_invalid_request(era: Era, case: str) -> None:
    """MCP spec basic#messages; 2025-11-25 basic/transports#streamable-http; basic/transports/streamable-http: a bad JSON-RPC envelope is 400/-32600; id null when the id is not valid."""
    mutate, expected_id = ENVELOPES[case]
    good = rpc("tools/call", era.params({"name": "echo", "arguments": {"text": "hi"}}), 7)
    resp = post(era.server, mutate(good), era.headers("tools/call", "echo"))
    assert_error(resp, 400, INVALID_REQUEST, expected_id)


def test_invalid_envelopes_leave_the_server_serving(legacy: Era) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: a session that sent bad envelopes still works, and so does the server."""
    for mutate, expected_id in ENVELOPES.values():
        good = rpc("tools/list", {}, 7)
        assert_error(post(legacy.server, mutate(good), legacy.headers("tools/list")), 400, INVALID_REQUEST,
                     expected_id)
    status, _, body = legacy.call("tools/call", {"name": "echo", "arguments": {"text": "ok"}}, request_id=8)
    assert status == 200 and body["id"] == 8 and body["result"]["content"][0]["text"] == "ok"
    assert_serving(legacy.server)


# --- Content-Type and Accept ------------------------------------------------------------------


BAD_MEDIA = {
    "content-type-text-plain": ({"Content-Type": "text/plain"}, 415),
    "content-type-form": ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
    "content-type-missing": ({"Content-Type": None}, 415),
    "accept-json-only": ({"Accept": "application/json"}, 406),
    "accept-sse-only": ({"Accept": "text/event-stream"}, 406),
    "accept-html": ({"Accept": "text/html"}, 406),
    "accept-missing": ({"Accept": None}, 406),
}


@pytest.mark.parametrize("case", list(BAD_MEDIA))
def test_bad_content_type_or_accept(era: Era, case: str) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http (SDK convention): non-JSON Content-Type is 415; Accept without both types is 406."""
    override, status = BAD_MEDIA[case]
    message = rpc("tools/call", era.params({"name": "echo", "arguments": {"text": "hi"}}), 3)
    resp = post(era.server, message, {**era.headers("tools/call", "echo"), **override})
    assert_error(resp, status, INVALID_REQUEST, None)
    # The refused request did nothing to the session or the server.
    status_ok, _, body = post(era.server, message, era.headers("tools/call", "echo"))
    assert status_ok == 200 and body["result"]["content"][0]["text"] == "hi"


@pytest.mark.parametrize("override", [
    {"Content-Type": "application/json; charset=utf-8"},
    {"Content-Type": "Application/JSON"},
    {"Accept": "text/event-stream, application/json"},
    {"Accept": "application/json;q=0.9, text/event-stream;q=1.0"},
], ids=["charset", "content-type-case", "accept-order", "accept-q"])
def test_equivalent_media_types_are_accepted(era: Era, override: dict[str, str]) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: media-type parameters, case and order do not change the meaning."""
    message = rpc("tools/call", era.params({"name": "echo", "arguments": {"text": "ok"}}), 4)
    status, _, body = post(era.server, message, {**era.headers("tools/call", "echo"), **override})
    assert status == 200, body
    assert body["result"]["content"][0]["text"] == "ok"


# --- legacy sessions ---------------------------------------------------------------------------


def test_legacy_request_without_session_id_is_400(legacy: Era) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: a server requiring sessions answers a non-initialize request without one with 400."""
    headers = {k: v for k, v in legacy.headers("tools/list").items() if k != "Mcp-Session-Id"}
    resp = post(legacy.server, rpc("tools/list", {}, 11), headers)
    assert_error(resp, 400, INVALID_REQUEST, 11)
    assert_serving(legacy.server)


@pytest.mark.parametrize("session_id", ["0" * 32, "not-a-session", "x" * 300])
def test_legacy_unknown_session_is_404(legacy: Era, session_id: str) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: a session id the server does not know (or has ended) gets 404."""
    headers = {**legacy.headers("tools/list"), "Mcp-Session-Id": session_id}
    resp = post(legacy.server, rpc("tools/list", {}, 12), headers)
    assert_error(resp, 404, INVALID_REQUEST, 12)


def test_legacy_deleted_session_is_404(legacy: Era) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: after DELETE ends a session, every request naming it gets 404."""
    server, headers = legacy.server, legacy.headers("tools/list")
    status, _, _ = request(server, "DELETE", headers={"Mcp-Session-Id": legacy.session_id})
    assert status == 200
    assert_error(post(server, rpc("tools/list", {}, 13), headers), 404, INVALID_REQUEST, 13)
    assert_error(post(server, rpc("ping", None, 14), headers), 404, INVALID_REQUEST, 14)
    # A notification naming it is refused too (no 202), and so are GET and a second DELETE.
    assert post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers).status == 404
    resp = request(server, "GET", headers={"Mcp-Session-Id": legacy.session_id, "Accept": "text/event-stream"})
    assert resp.status == 404, resp
    assert request(server, "DELETE", headers={"Mcp-Session-Id": legacy.session_id}).status == 404
    # A new session works.
    fresh = Era(server, legacy.version)
    status, _, body = fresh.call("ping", request_id=15)
    assert status == 200 and body == {"jsonrpc": "2.0", "id": 15, "result": {}}
    assert_serving(server)


def test_legacy_get_stream_bad_input(legacy: Era) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: GET needs ``Accept: text/event-stream`` (else 406) and a live session (else 404)."""
    server = legacy.server
    resp = request(server, "GET", headers={"Mcp-Session-Id": legacy.session_id, "Accept": "application/json"})
    assert_error(resp, 406, INVALID_REQUEST, None)
    resp = request(server, "GET", headers={"Mcp-Session-Id": "0" * 32, "Accept": "text/event-stream"})
    assert_error(resp, 404, INVALID_REQUEST, None)
    status, _, body = legacy.call("ping", request_id=18)
    assert status == 200 and body["result"] == {}


INITIALIZE = rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}, 19)


@pytest.mark.parametrize("message, request_id", [
    ({**INITIALIZE, "jsonrpc": "1.0"}, 19),
    ({**INITIALIZE, "id": None}, None),
    (_without(INITIALIZE, "id"), None),
    ({**INITIALIZE, "params": ["2025-11-25"]}, 19),
], ids=["jsonrpc-1.0", "id-null", "notification", "params-list"])
def test_invalid_initialize_is_400_and_mints_no_session(live_server_mcp: Any, message: dict[str, Any],
                                                        request_id: Any) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http; 2025-11-25 basic/lifecycle: an ``initialize`` that is not a valid request is 400/-32600 and starts no session."""
    resp = post(live_server_mcp, message)
    assert_error(resp, 400, INVALID_REQUEST, request_id)
    assert "mcp-session-id" not in resp.headers


@pytest.mark.parametrize("params", [
    None, {}, {"protocolVersion": 20251125, "capabilities": {}, "clientInfo": CLIENT_INFO},
], ids=["no-params", "empty-params", "version-number"])
def test_initialize_without_usable_version_mints_no_session(live_server_mcp: Any, params: Any) -> None:
    """MCP spec 2025-11-25 basic/lifecycle: ``initialize`` needs a ``protocolVersion`` string: -32602, and no session is started."""
    resp = post(live_server_mcp, rpc("initialize", params, 20))
    assert resp.status in (200, 400), resp
    assert_error(resp, resp.status, INVALID_PARAMS, 20)
    assert "mcp-session-id" not in resp.headers
    assert_serving(live_server_mcp)


@pytest.mark.parametrize("header", ["2099-01-01", "garbage", "", "2024-13-45"])
def test_legacy_unknown_protocol_version_header_is_400(legacy: Era, header: str) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: an invalid or unsupported MCP-Protocol-Version on a session is 400."""
    headers = {**legacy.headers("tools/list"), "MCP-Protocol-Version": header}
    resp = post(legacy.server, rpc("tools/list", {}, 16), headers)
    assert_error(resp, 400, INVALID_REQUEST, 16)
    status, _, body = legacy.call("tools/list", request_id=17)
    assert status == 200 and body["id"] == 17 and "tools" in body["result"]


def test_batch_on_2025_11_25_session_is_400(live_server_mcp: Any) -> None:
    """MCP spec basic#messages; basic/versioning#backward-compatibility: batches were removed after 2025-03-26; an array is 400 (-32600)."""
    era = Era(live_server_mcp, "2025-11-25")
    batch = [rpc("ping", None, 21), rpc("tools/list", {}, 22)]
    assert_error(post(live_server_mcp, batch, era.headers("ping")), 400, INVALID_REQUEST, None)
    status, _, body = era.call("ping", request_id=23)
    assert status == 200 and body["result"] == {}


def test_batch_on_2025_03_26_session_is_answered(live_server_mcp: Any) -> None:
    """MCP spec basic#messages; 2025-11-25 basic/transports#streamable-http: a 2025-03-26 server MUST accept batches; answered with an array of responses."""
    era = Era(live_server_mcp, "2025-03-26")
    batch = [
        rpc("ping", None, 31),
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}},
        rpc("tools/call", {"name": "echo", "arguments": {"text": "b"}}, "32"),
        rpc("tools/call", {"name": "no_such_tool", "arguments": {}}, 33),
    ]
    status, headers, body = post(live_server_mcp, batch, era.headers("ping"))
    assert status == 200, body
    assert headers["content-type"].startswith("application/json")
    assert isinstance(body, list)
    by_id = {item["id"]: item for item in body}
    assert set(by_id) == {31, "32", 33}
    assert by_id[31]["result"] == {}
    assert by_id["32"]["result"]["content"][0]["text"] == "b"
    assert by_id[33]["error"]["code"] == INVALID_PARAMS


def test_batch_on_2025_03_26_session_with_bad_members(live_server_mcp: Any) -> None:
    """MCP spec basic#messages: invalid members and an ``initialize`` inside a batch get their own error responses."""
    era = Era(live_server_mcp, "2025-03-26")
    batch = [
        42,
        {"jsonrpc": "1.0", "id": 41, "method": "ping"},
        rpc("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": CLIENT_INFO}, 42),
        rpc("ping", None, 43),
    ]
    status, _, body = post(live_server_mcp, batch, era.headers("ping"))
    assert status == 200, body
    assert isinstance(body, list) and len(body) == 4
    errors = [item for item in body if "error" in item]
    assert sorted(item["error"]["code"] for item in errors) == [INVALID_REQUEST] * 3
    assert sorted((item["id"] for item in errors), key=str) == sorted([None, 41, 42], key=str)
    assert [item["result"] for item in body if "result" in item] == [{}]


def test_batch_on_2025_03_26_session_edge_cases(live_server_mcp: Any) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: a batch of notifications only is 202 with no body; an empty batch is 400."""
    era = Era(live_server_mcp, "2025-03-26")
    notes = [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}}]
    status, _, body = post(live_server_mcp, notes, era.headers("ping"))
    assert (status, body) == (202, "")
    assert_error(post(live_server_mcp, [], era.headers("ping")), 400, INVALID_REQUEST, None)
    assert_serving(live_server_mcp)


def test_batch_without_session_or_in_2026_is_400(live_server_mcp: Any) -> None:
    """MCP spec basic/versioning#backward-compatibility: a JSON array is only valid on a 2025-03-26 session; anywhere else it is 400."""
    batch = [echo_call(51), echo_call(52)]
    assert_error(post(live_server_mcp, batch, modern_headers("tools/call", "echo")), 400, INVALID_REQUEST, None)
    assert_error(post(live_server_mcp, batch), 400, INVALID_REQUEST, None)
    assert_serving(live_server_mcp)


def test_legacy_errors_are_http_200(legacy: Era) -> None:
    """MCP spec basic/transports/streamable-http table note; basic#error-codes: in a legacy session a JSON-RPC error is an ordinary 200 response."""
    assert_error(legacy.call("tools/explode", {}, request_id=61), 200, METHOD_NOT_FOUND, 61)
    assert_error(legacy.call("server/discover", {}, request_id=62), 200, METHOD_NOT_FOUND, 62)
    status, _, body = legacy.call("ping", request_id=63)
    assert status == 200 and body["result"] == {}


# --- 2026-07-28: _meta -------------------------------------------------------------------------


@pytest.mark.parametrize("params", [
    {"name": "echo", "arguments": {"text": "hi"}},
    {"name": "echo", "arguments": {"text": "hi"}, "_meta": "2026-07-28"},
    {"name": "echo", "arguments": {"text": "hi"}, "_meta": {}},
    modern_params({"name": "echo", "arguments": {"text": "hi"}}, drop=("protocolVersion",)),
], ids=["no-meta", "meta-string", "meta-empty", "no-protocol-version"])
def test_modern_missing_meta_is_400_invalid_params(live_server_mcp: Any, params: dict[str, Any]) -> None:
    """MCP spec basic#messages; basic/transports/streamable-http: a missing required ``_meta`` field is 400 with -32602."""
    resp = post(live_server_mcp, rpc("tools/call", params, 71), modern_headers("tools/call", "echo"))
    assert_error(resp, 400, INVALID_PARAMS, 71)


@pytest.mark.parametrize("capabilities", ["missing", None, [], "all"])
def test_modern_missing_client_capabilities_is_400_invalid_params(live_server_mcp: Any, capabilities: Any) -> None:
    """MCP spec basic#messages; basic/transports/streamable-http: ``clientCapabilities`` is required (an object; ``{}`` means none): else 400/-32602."""
    params = modern_params({"name": "echo", "arguments": {"text": "hi"}}, drop=("clientCapabilities",))
    if capabilities != "missing":
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
    resp = post(live_server_mcp, rpc("tools/call", params, 72), modern_headers("tools/call", "echo"))
    assert_error(resp, 400, INVALID_PARAMS, 72)
    assert_serving(live_server_mcp)


@pytest.mark.parametrize("version", ["2099-01-01", "1900-01-01", "latest"])
def test_modern_unsupported_version_is_400_with_supported_list(live_server_mcp: Any, version: str) -> None:
    """MCP spec basic/transports/streamable-http; basic/versioning; basic#error-codes: an unsupported ``_meta`` version is 400/-32022 with data.supported/requested."""
    params = modern_params({"name": "echo", "arguments": {"text": "hi"}}, version=version)
    resp = post(live_server_mcp, rpc("tools/call", params, 73), modern_headers("tools/call", "echo", version=version))
    error = assert_error(resp, 400, UNSUPPORTED_PROTOCOL_VERSION, 73)
    assert error["data"]["requested"] == version
    assert MODERN in error["data"]["supported"]
    assert all(isinstance(v, str) for v in error["data"]["supported"])
    assert version not in error["data"]["supported"]


def test_modern_unsupported_version_on_discover(live_server_mcp: Any) -> None:
    """MCP spec basic/transports/stdio; basic/versioning: a dual-era client probes with ``server/discover``; an unknown version gets -32022."""
    params = modern_params(version="2099-01-01")
    resp = post(live_server_mcp, rpc("server/discover", params, 74),
                modern_headers("server/discover", version="2099-01-01"))
    error = assert_error(resp, 400, UNSUPPORTED_PROTOCOL_VERSION, 74)
    assert error["data"] == {"supported": error["data"]["supported"], "requested": "2099-01-01"}
    assert_serving(live_server_mcp)


# --- 2026-07-28: mirrored headers --------------------------------------------------------------


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


HEADER_CASES = {
    "protocol-version-missing": {"MCP-Protocol-Version": None},
    "protocol-version-legacy": {"MCP-Protocol-Version": "2025-11-25"},
    "protocol-version-other": {"MCP-Protocol-Version": "2099-01-01"},
    "method-missing": {"Mcp-Method": None},
    "method-mismatch": {"Mcp-Method": "tools/list"},
    "method-case": {"Mcp-Method": "TOOLS/CALL"},
    "name-missing": {"Mcp-Name": None},
    "name-mismatch": {"Mcp-Name": "add_numbers"},
    "name-case": {"Mcp-Name": "ECHO"},
    "name-bad-base64": {"Mcp-Name": "=?base64?!!not base64!!?="},
    "name-base64-of-other": {"Mcp-Name": _b64("add_numbers")},
    "name-base64-invalid-utf8": {"Mcp-Name": "=?base64?" + base64.b64encode(b"\xff\xfe").decode() + "?="},
    "name-non-ascii": {"Mcp-Name": "écho".encode("utf-8")},
    "name-base64-uppercase-sentinel": {"Mcp-Name": "=?BASE64?" + base64.b64encode(b"echo").decode() + "?="},
}


@pytest.mark.parametrize("case", list(HEADER_CASES))
def test_modern_header_mismatch_is_400(live_server_mcp: Any, case: str) -> None:
    """MCP spec basic/transports/streamable-http: a missing, malformed or mismatched MCP-Protocol-Version/Mcp-Method/Mcp-Name is 400/-32020."""
    headers = {**modern_headers("tools/call", "echo"), **HEADER_CASES[case]}
    resp = post(live_server_mcp, echo_call(81), headers)
    assert_error(resp, 400, HEADER_MISMATCH, 81)


def test_modern_header_mismatches_leave_the_server_serving(live_server_mcp: Any) -> None:
    """MCP spec basic/transports/streamable-http: refused header mismatches do not disturb later requests."""
    for override in HEADER_CASES.values():
        resp = post(live_server_mcp, echo_call(82), {**modern_headers("tools/call", "echo"), **override})
        assert_error(resp, 400, HEADER_MISMATCH, 82)
    assert_serving(live_server_mcp)


@pytest.mark.parametrize("method, extra, name", [
    ("resources/read", {"uri": "memo://greeting"}, "memo://items/1"),
    ("resources/read", {"uri": "memo://greeting"}, None),
    ("prompts/get", {"name": "summarize", "arguments": {"topic": "x"}}, "echo"),
    ("prompts/get", {"name": "summarize", "arguments": {"topic": "x"}}, None),
], ids=["read-mismatch", "read-missing", "prompt-mismatch", "prompt-missing"])
def test_modern_mcp_name_for_resources_and_prompts(live_server_mcp: Any, method: str, extra: dict[str, Any],
                                                   name: str | None) -> None:
    """MCP spec basic/transports/streamable-http: Mcp-Name mirrors ``params.uri`` (resources/read) and ``params.name`` (prompts/get)."""
    resp = post(live_server_mcp, rpc(method, modern_params(extra), 83), modern_headers(method, name))
    assert_error(resp, 400, HEADER_MISMATCH, 83)


@pytest.mark.parametrize("method, extra, name", [
    ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, _b64("echo")),
    ("resources/read", {"uri": "memo://greeting"}, _b64("memo://greeting")),
    ("prompts/get", {"name": "summarize", "arguments": {"topic": "x"}}, _b64("summarize")),
], ids=["tool", "resource", "prompt"])
def test_modern_base64_mcp_name_is_accepted(live_server_mcp: Any, method: str, extra: dict[str, Any],
                                            name: str) -> None:
    """MCP spec basic/transports/streamable-http: ``=?base64?…?=`` values are decoded before comparing; the right name is accepted."""
    status, _, body = post(live_server_mcp, rpc(method, modern_params(extra), 84), modern_headers(method, name))
    assert status == 200, body
    assert body["id"] == 84 and body["result"]["resultType"] == "complete"


def test_modern_header_names_are_case_insensitive(live_server_mcp: Any) -> None:
    """MCP spec basic/transports/streamable-http: header names are case-insensitive (values are not)."""
    headers = {"mcp-protocol-version": MODERN, "MCP-METHOD": "tools/call", "mcp-NAME": "echo"}
    status, _, body = post(live_server_mcp, echo_call(85, "case"), headers)
    assert status == 200, body
    assert body["result"]["content"][0]["text"] == "case"


@pytest.mark.parametrize("name, first, last", [
    ("Mcp-Method", "tools/list", "tools/call"),
    ("Mcp-Name", "add_numbers", "echo"),
    ("MCP-Protocol-Version", "2025-11-25", MODERN),
], ids=["method", "name", "protocol-version"])
def test_modern_conflicting_duplicate_headers_are_400(live_server_mcp: Any, name: str, first: str, last: str) -> None:
    """
    MCP spec basic/transports/streamable-http; security best practices: mirrored headers exist so intermediaries and the server cannot disagree; two
    field lines with different values (one of them not matching the body) are a mismatch: 400/-32020.
    """
    data = raw_post(live_server_mcp, json.dumps(echo_call(86)).encode(), modern_headers("tools/call", "echo"))
    head, body = data.split(b"\r\n\r\n", 1)
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(name.lower().encode() + b":")]
    lines += [f"{name}: {first}".encode(), f"{name}: {last}".encode()]
    resp = raw_exchange(live_server_mcp, b"\r\n".join(lines) + b"\r\n\r\n" + body)
    assert_error(resp, 400, HEADER_MISMATCH, 86)


def test_modern_repeated_identical_headers_are_served(live_server_mcp: Any) -> None:
    """A mirrored header sent twice with the same value leaves nothing to disagree about: served."""
    data = raw_post(live_server_mcp, json.dumps(echo_call(88, "twice")).encode(), modern_headers("tools/call", "echo"))
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n") + [b"Mcp-Method: tools/call", b"mcp-name: echo"]
    resp = raw_exchange(live_server_mcp, b"\r\n".join(lines) + b"\r\n\r\n" + body)
    assert resp[0] == 200, resp
    assert resp[2]["result"]["content"][0]["text"] == "twice"


@pytest.mark.parametrize("level", ["loud", "DEBUG", 3])
def test_modern_unknown_log_level_is_400(live_server_mcp: Any, level: Any) -> None:
    """MCP spec server/utilities/logging: an unknown ``_meta`` logLevel SHOULD be rejected with -32602 (HTTP 400)."""
    params = modern_params({"name": "echo", "arguments": {"text": "hi"}})
    params["_meta"]["io.modelcontextprotocol/logLevel"] = level
    resp = post(live_server_mcp, rpc("tools/call", params, 87), modern_headers("tools/call", "echo"))
    assert_error(resp, 400, INVALID_PARAMS, 87)


# --- 2026-07-28: methods and message kinds -----------------------------------------------------


@pytest.mark.parametrize("method, extra", [
    ("ping", None),
    ("logging/setLevel", {"level": "debug"}),
    ("resources/subscribe", {"uri": "memo://greeting"}),
    ("resources/unsubscribe", {"uri": "memo://greeting"}),
    ("tasks/list", {}),
    ("tools/explode", {}),
    ("notifications/initialized", {}),
], ids=["ping", "logging-setLevel", "resources-subscribe", "resources-unsubscribe", "tasks-list", "unknown",
        "initialized-as-request"])
def test_modern_removed_or_unknown_method_is_404(live_server_mcp: Any, method: str, extra: Any) -> None:
    """MCP spec basic/transports/streamable-http; basic#meta; basic#error-codes: methods 2026-07-28 removed or never had are 404 with -32601."""
    resp = post(live_server_mcp, rpc(method, modern_params(extra), 91), modern_headers(method))
    assert_error(resp, 404, METHOD_NOT_FOUND, 91)


def test_modern_removed_methods_leave_the_server_serving(live_server_mcp: Any) -> None:
    """MCP spec 2025-11-25 basic/utilities/ping: ``ping`` without ``_meta`` and 2026 headers is still refused; the server keeps serving."""
    resp = post(live_server_mcp, rpc("ping", None, 92), modern_headers("ping"))
    # No _meta: the missing envelope is what is wrong (400/-32602), whatever the method.
    assert_error(resp, 400, INVALID_PARAMS, 92)
    assert_serving(live_server_mcp)


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": 93, "result": {}},
    {"jsonrpc": "2.0", "id": 93, "result": {"resultType": "complete", "_meta": {}}},
    {"jsonrpc": "2.0", "id": 93, "error": {"code": -32603, "message": "boom"}},
], ids=["result", "result-with-meta", "error"])
def test_modern_response_object_is_400(live_server_mcp: Any, message: dict[str, Any]) -> None:
    """MCP spec basic/transports/streamable-http; basic/versioning#backward-compatibility: 2026-07-28 clients MUST NOT POST responses; one is refused with 400 (-32600)."""
    resp = post(live_server_mcp, message, {"MCP-Protocol-Version": MODERN})
    assert_error(resp, 400, INVALID_REQUEST, 93)
    assert_serving(live_server_mcp)


def test_modern_get_without_session_is_405(live_server_mcp: Any) -> None:
    """MCP spec basic/transports/streamable-http; basic/versioning#backward-compatibility; basic#meta: no GET stream in 2026-07-28 (nor without a session): 405."""
    resp = request(live_server_mcp, "GET", headers={"Accept": "text/event-stream", "MCP-Protocol-Version": MODERN})
    assert resp.status == 405, resp
    resp = request(live_server_mcp, "GET", headers={"Accept": "text/event-stream"})
    assert resp.status == 405, resp
    assert_serving(live_server_mcp)


def test_modern_delete_without_session_is_405(live_server_mcp: Any) -> None:
    """MCP spec basic/versioning#backward-compatibility (DELETE without ``Mcp-Session-Id`` ⇒ 405); basic#meta."""
    resp = request(live_server_mcp, "DELETE", headers={"MCP-Protocol-Version": MODERN})
    assert resp.status == 405, resp


@pytest.mark.parametrize("method", ["PUT", "PATCH", "HEAD"])
def test_other_http_methods_are_405(live_server_mcp: Any, method: str) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http (SDK convention): methods other than GET, POST, DELETE are 405 with ``Allow``."""
    resp = request(live_server_mcp, method, headers={"Accept": ACCEPT_BOTH})
    assert resp.status == 405, resp
    assert {m.strip() for m in resp.headers["allow"].split(",")} >= {"GET", "POST"}
    assert_serving(live_server_mcp)


def test_modern_ignores_foreign_session_id(live_server_mcp: Any) -> None:
    """MCP spec basic/transports/streamable-http: an old client's ``Mcp-Session-Id`` on a 2026-07-28 request is ignored, never echoed."""
    headers = {**modern_headers("tools/call", "echo"), "Mcp-Session-Id": "no-such-session"}
    status, resp_headers, body = post(live_server_mcp, echo_call(94, "ignored"), headers)
    assert status == 200, body
    assert body["result"]["content"][0]["text"] == "ignored"
    assert "mcp-session-id" not in resp_headers


# --- body size ---------------------------------------------------------------------------------


def _padded(message: dict[str, Any], size: int) -> bytes:
    """``message`` as JSON padded with trailing spaces to exactly ``size`` bytes."""
    encoded = json.dumps(message).encode()
    assert len(encoded) <= size
    return encoded + b" " * (size - len(encoded))


def test_body_over_limit_is_413(live_server_mcp: Any) -> None:
    """MCP spec security best practices (bounded resources): a ~5 MB body is refused with 413 promptly; the server keeps serving."""
    body = json.dumps(echo_call(101, "x" * 5_000_000)).encode()
    resp = raw_exchange(live_server_mcp, raw_post(live_server_mcp, body, modern_headers("tools/call", "echo")))
    assert_error(resp, 413, INVALID_REQUEST, None)
    assert_serving(live_server_mcp)


def test_body_over_limit_with_http_client_is_413(live_server_mcp: Any) -> None:
    """MCP spec security best practices: the same through ``http.client`` on a 2025-11-25 session (the connection is not hung)."""
    era = Era(live_server_mcp, "2025-11-25")
    body = rpc("tools/call", {"name": "echo", "arguments": {"text": "y" * 5_000_000}}, 102)
    assert_error(post(live_server_mcp, body, era.headers("tools/call")), 413, INVALID_REQUEST, None)
    status, _, answer = era.call("ping", request_id=103)
    assert status == 200 and answer["result"] == {}


def test_chunked_body_over_limit_is_413(live_server_mcp: Any) -> None:
    """MCP spec security best practices: a chunked body (no Content-Length) over the limit is refused with 413 too."""
    body = json.dumps(echo_call(104, "z" * 5_000_000)).encode()
    data = raw_post(live_server_mcp, body, modern_headers("tools/call", "echo"), chunked=True)
    assert_error(raw_exchange(live_server_mcp, data), 413, INVALID_REQUEST, None)
    assert_serving(live_server_mcp)


def test_content_length_just_over_limit_is_413_and_at_limit_is_served(live_server_mcp: Any) -> None:
    """MCP spec security best practices: Content-Length of limit+1 bytes is 413; a body of exactly the limit is served."""
    headers = modern_headers("tools/call", "echo")
    over = _padded(echo_call(105, "over"), LIMIT + 1)
    assert_error(raw_exchange(live_server_mcp, raw_post(live_server_mcp, over, headers)), 413, INVALID_REQUEST, None)
    at = _padded(echo_call(106, "at"), LIMIT)
    status, _, body = raw_exchange(live_server_mcp, raw_post(live_server_mcp, at, headers))
    assert status == 200, body
    assert body["result"]["content"][0]["text"] == "at"


@pytest.mark.xfail(strict=True, reason="LIMITATION of daphne: a Content-Length over the limit is not refused until the whole body "
                                       "has arrived (daphne buffers it before the app runs); the client hangs")
def test_content_length_header_over_limit_is_refused_before_the_body(live_server_mcp: Any) -> None:
    """MCP spec security best practices: a declared Content-Length over the limit can be refused (413) without reading the body."""
    head = raw_post(live_server_mcp, b"", {**modern_headers("tools/call", "echo"), "Content-Length": str(50 * LIMIT)})
    try:
        resp = raw_exchange(live_server_mcp, head, timeout=3)
    except TimeoutError:
        pytest.fail("no answer within 3 s to a Content-Length over the limit")
    assert resp.status == 413, resp


# --- Host and Origin ---------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:{port}", "127.0.0.1.evil.example.com:{port}"])
def test_foreign_host_is_refused(era: Era, host: str) -> None:
    """MCP spec security best practices (SDK convention): DNS-rebinding protection checks Host; a foreign Host is 4xx (here 421)."""
    message = rpc("tools/call", era.params({"name": "echo", "arguments": {"text": "hi"}}), 111)
    headers = {**era.headers("tools/call", "echo"), "Host": host.format(port=era.server.port)}
    resp = post(era.server, message, headers)
    assert 400 <= resp.status < 500
    assert_error(resp, 421, INVALID_REQUEST, None)
    assert "mcp-session-id" not in resp.headers


@pytest.mark.parametrize("origin", ["http://evil.example.com", "https://evil.example.com:{port}",
                                    "http://127.0.0.1.evil.example.com:{port}", "null", "file://", "evil"])
def test_foreign_origin_is_403(era: Era, origin: str) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http; basic/transports/streamable-http; security best practices: a present but invalid Origin is 403 (body: JSON-RPC error without id)."""
    message = rpc("tools/call", era.params({"name": "echo", "arguments": {"text": "hi"}}), 112)
    headers = {**era.headers("tools/call", "echo"), "Origin": origin.format(port=era.server.port)}
    assert_error(post(era.server, message, headers), 403, INVALID_REQUEST, None)


def test_missing_host_is_refused(live_server_mcp: Any) -> None:
    """MCP spec security best practices: a request naming no host at all cannot be checked against the allowed hosts: 421."""
    data = raw_post(live_server_mcp, json.dumps(echo_call(117)).encode(),
                    {**modern_headers("tools/call", "echo"), "Host": None})
    assert_error(raw_exchange(live_server_mcp, data), 421, INVALID_REQUEST, None)


def test_foreign_origin_on_initialize_mints_no_session(live_server_mcp: Any) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http; security best practices: a refused ``initialize`` (bad Origin) creates no session."""
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
    resp = post(live_server_mcp, rpc("initialize", params, 113), {"Origin": "http://evil.example.com"})
    assert_error(resp, 403, INVALID_REQUEST, None)
    assert "mcp-session-id" not in resp.headers


def test_foreign_origin_on_get_and_delete_is_403(legacy: Era) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http; security best practices: Origin is checked on every request, GET and DELETE included; the session survives."""
    server, sid = legacy.server, legacy.session_id
    evil = {"Origin": "http://evil.example.com", "Mcp-Session-Id": sid}
    assert request(server, "GET", headers={**evil, "Accept": "text/event-stream"}).status == 403
    assert request(server, "DELETE", headers=evil).status == 403
    status, _, body = legacy.call("ping", request_id=114)
    assert status == 200 and body["result"] == {}
    assert_serving(server)


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_own_origin_is_accepted(era: Era, origin: str) -> None:
    """MCP spec security best practices: the server's own origins (127.0.0.1 and localhost) are accepted."""
    message = rpc("tools/call", era.params({"name": "echo", "arguments": {"text": "mine"}}), 115)
    headers = {**era.headers("tools/call", "echo"), "Origin": origin.format(port=era.server.port)}
    status, _, body = post(era.server, message, headers)
    assert status == 200, body
    assert body["result"]["content"][0]["text"] == "mine"


def test_foreign_host_and_origin_leave_the_server_serving(live_server_mcp: Any) -> None:
    """MCP spec security best practices: after refused hosts and origins the server keeps serving."""
    for override, status in (({"Host": "evil.example.com"}, 421), ({"Origin": "http://evil.example.com"}, 403)):
        resp = post(live_server_mcp, echo_call(116), {**modern_headers("tools/call", "echo"), **override})
        assert resp.status == status
    assert_serving(live_server_mcp)


# --- unknown names, URIs and cursors -----------------------------------------------------------


def test_unknown_tool(era: Era) -> None:
    """MCP spec server/tools; basic#error-codes: an unknown tool is -32602 (HTTP 400 in 2026-07-28, 200 in a legacy session)."""
    resp = era.call("tools/call", {"name": "no_such_tool", "arguments": {}}, name="no_such_tool", request_id=121)
    assert_error(resp, era.error_status(400), INVALID_PARAMS, 121)
    assert_serving(era.server)


@pytest.mark.parametrize("uri", ["memo://nothing", "memo://items/1/extra", "file:///etc/passwd"])
def test_unknown_resource(era: Era, uri: str) -> None:
    """MCP spec server/resources; basic#error-codes: unknown URI is -32602 + data.uri (HTTP 400) in 2026-07-28, -32002 in legacy sessions."""
    resp = era.call("resources/read", {"uri": uri}, name=uri, request_id=122)
    code = INVALID_PARAMS if era.modern else RESOURCE_NOT_FOUND_LEGACY
    error = assert_error(resp, era.error_status(400), code, 122)
    assert error["data"]["uri"] == uri


def test_unknown_prompt(era: Era) -> None:
    """MCP spec server/prompts: an unknown prompt is -32602 (HTTP 400 in 2026-07-28, 200 in a legacy session)."""
    resp = era.call("prompts/get", {"name": "no_such_prompt"}, name="no_such_prompt", request_id=123)
    assert_error(resp, era.error_status(400), INVALID_PARAMS, 123)


@pytest.mark.parametrize("method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list"])
@pytest.mark.parametrize("cursor", ["not-a-cursor!", "eyJvIjotMX0", "e30"], ids=["garbage", "negative", "no-offset"])
def test_invalid_cursor(era: Era, method: str, cursor: str) -> None:
    """MCP spec server/utilities/pagination: a cursor the server did not mint is -32602 (HTTP 400 in 2026-07-28, 200 legacy)."""
    resp = era.call(method, {"cursor": cursor}, request_id=124)
    assert_error(resp, era.error_status(400), INVALID_PARAMS, 124)


def test_unknown_names_leave_the_server_serving(live_server_mcp: Any) -> None:
    """MCP spec basic#error-codes: JSON-RPC errors for unknown names are ordinary answers; the server keeps serving."""
    for version in ERAS:
        era = Era(live_server_mcp, version)
        era.call("tools/call", {"name": "nope"}, name="nope", request_id=125)
        era.call("resources/read", {"uri": "memo://nope"}, name="memo://nope", request_id=126)
        era.call("tools/list", {"cursor": "bad"}, request_id=127)
    assert_serving(live_server_mcp)


# --- odd JSON ------------------------------------------------------------------------------------


def _with_raw(message: dict[str, Any], token: str, raw: str) -> bytes:
    """``message`` as JSON with the string ``token`` replaced by the raw JSON text ``raw``."""
    encoded = json.dumps(message)
    assert json.dumps(token) in encoded
    return encoded.replace(json.dumps(token), raw).encode()


LONE_SURROGATE = r'"\ud800"'


def _lone_surrogate_cases(server: Any) -> dict[str, tuple[bytes, dict[str, Any]]]:
    session = legacy_session(server, "2025-11-25")
    legacy = legacy_headers(session, "2025-11-25")
    return {
        "modern-tool-text": (_with_raw(echo_call(141, "SUR"), "SUR", LONE_SURROGATE),
                             modern_headers("tools/call", "echo")),
        "modern-request-id": (_with_raw(rpc("tools/list", modern_params(), "SUR"), "SUR", LONE_SURROGATE),
                              modern_headers("tools/list")),
        "legacy-tool-text": (_with_raw(rpc("tools/call", {"name": "echo", "arguments": {"text": "SUR"}}, 142), "SUR",
                                       LONE_SURROGATE), legacy),
        "legacy-request-id": (_with_raw(rpc("ping", None, "SUR"), "SUR", LONE_SURROGATE), legacy),
        "legacy-bad-envelope-id": (_with_raw({"jsonrpc": "1.0", "id": "SUR", "method": "ping"}, "SUR",
                                             LONE_SURROGATE), legacy),
    }


@pytest.mark.parametrize("case", ["modern-tool-text", "modern-request-id", "legacy-tool-text", "legacy-request-id",
                                  "legacy-bad-envelope-id"])
def test_lone_surrogate_escape_gets_a_json_answer(live_server_mcp: Any, case: str) -> None:
    """
    MCP spec basic#messages (UTF-8 JSON-RPC); 2025-11-25 basic/transports#streamable-http: ``"\\ud800"`` is grammatical JSON but no Unicode text; whatever
    the server makes of it (serve it, or refuse it with 400), it must answer with JSON, promptly.
    """
    body, headers = _lone_surrogate_cases(live_server_mcp)[case]
    try:
        resp = post(live_server_mcp, body, headers, timeout=4)
    except TimeoutError:
        pytest.fail("no answer within 4 s")
    assert resp.status in (200, 400), resp
    assert isinstance(resp.body, dict) and ("result" in resp.body or "error" in resp.body), resp
    if resp.status == 400:
        assert resp.body["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST)
    assert_serving(live_server_mcp)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_literals_are_parse_errors(era: Era, literal: str) -> None:
    """MCP spec basic#messages; basic#error-codes: the body must be JSON; ``NaN``/``Infinity`` are not, so the body is 400/-32700."""
    message = rpc("tools/call", era.params({"name": "echo", "arguments": {"text": "hi", "times": "N"}}), 143)
    resp = post(era.server, _with_raw(message, "N", literal), era.headers("tools/call", "echo"))
    assert_error(resp, 400, PARSE_ERROR, None)


def test_deeply_nested_json_is_a_parse_error(era: Era) -> None:
    """MCP spec basic#messages; security best practices: nesting beyond what the parser handles is refused as 400/-32700, not a crash."""
    resp = post(era.server, b"[" * 100_000 + b"]" * 100_000, era.headers("tools/call", "echo"))
    assert_error(resp, 400, PARSE_ERROR, None)
    assert_serving(era.server)


# --- connection reuse --------------------------------------------------------------------------


def test_keep_alive_connection_survives_bad_requests(live_server_mcp: Any) -> None:
    """MCP spec 2025-11-25 basic/transports#streamable-http: an error answer does not poison a kept-alive connection; the next request on it is served."""
    conn = http.client.HTTPConnection(live_server_mcp.host, live_server_mcp.port, timeout=TIMEOUT)
    try:
        headers = modern_headers("tools/call", "echo")
        assert_error(post(live_server_mcp, b"{oops", headers, conn=conn), 400, PARSE_ERROR, None)
        assert_error(post(live_server_mcp, echo_call(131), {**headers, "Mcp-Name": "nope"}, conn=conn),
                     400, HEADER_MISMATCH, 131)
        assert_error(post(live_server_mcp, echo_call(132), {**headers, "Content-Type": "text/plain"}, conn=conn),
                     415, INVALID_REQUEST, None)
        status, _, body = post(live_server_mcp, echo_call(133, "again"), headers, conn=conn)
        assert status == 200, body
        assert body["result"]["content"][0]["text"] == "again"
    finally:
        conn.close()
