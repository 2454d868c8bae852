"""
Strategies for the HTTP side: the headers of a POST (mostly right, one wrong now and then), the
mirrored 2026-07-28 headers consistent or not with the body (MCP spec 2026-07-28,
basic/transports/streamable-http, "Request metadata headers"), and bodies of any bytes.
"""

import base64
import json
from functools import cache
from typing import Any

from hypothesis import strategies as st

from django_mcp.protocol.versions import ALL_VERSIONS

from .site_names import PARAM_HEADERS, text_values
from .strategies import MODERN, json_values, legacy_messages, modern_messages

Headers = list[tuple[bytes, bytes]]
ACCEPT_BOTH = b"application/json, text/event-stream"
BASE: Headers = [(b"host", b"testserver"), (b"content-type", b"application/json"), (b"accept", ACCEPT_BOTH)]
# Which param the Mcp-Name header mirrors, per method.
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def header_value(text: str) -> bytes:
    """A header value as a client would send it: plain when it is visible ASCII, else base64-wrapped."""
    if all(" " <= char <= "~" for char in text) and text == text.strip():
        return text.encode("ascii")
    return b"=?base64?" + base64.b64encode(text.encode("utf-8", "surrogatepass")) + b"?="


@cache
def raw_header_values() -> st.SearchStrategy[bytes]:
    """Header values a real server could pass on: any bytes but CR, LF and NUL."""
    return st.binary(max_size=40).map(lambda raw: raw.replace(b"\r", b"").replace(b"\n", b"").replace(b"\0", b""))


@st.composite
def damaged_base(draw: st.DrawFn) -> Headers:
    """The Host, Content-Type and Accept of a POST, with one of them (or an extra header) off now and then."""
    headers = list(BASE)
    choice = draw(st.sampled_from(["keep"] * 100 + ["content-type", "accept", "host", "origin", "auth", "extra",
                                                    "duplicate", "length"]))
    if choice == "content-type":
        headers[1] = (b"content-type", draw(st.one_of(st.sampled_from(
            [b"text/plain", b"application/json; charset=utf-8", b"APPLICATION/JSON", b"", b"application/jsonx"]),
            raw_header_values())))
    elif choice == "accept":
        headers[2] = (b"accept", draw(st.one_of(st.sampled_from(
            [b"*/*", b"application/json", b"text/event-stream", b"", b"application/*, text/*"]), raw_header_values())))
    elif choice == "host":
        hosts = [b"evil.example", b"", b"localhost:8000", b"[::1]", b"testserver:x"]
        headers[0] = (b"host", draw(st.sampled_from(hosts)))
    elif choice == "origin":
        headers.append((b"origin", draw(st.sampled_from([b"http://evil.example", b"null", b"http://testserver"]))))
    elif choice == "auth":
        name = draw(st.sampled_from([b"authorization", b"x-api-key"]))
        headers.append((name, draw(st.one_of(st.sampled_from([b"Bearer x", b"Basic Og==", b"Bearer", b""]),
                                             raw_header_values()))))
    elif choice == "extra":
        name = draw(st.sampled_from([b"mcp-session-id", b"last-event-id", b"mcp-protocol-version", b"mcp-method",
                                     b"mcp-name", b"mcp-param-region", b"x-whatever"]))
        headers.append((name, draw(raw_header_values())))
    elif choice == "duplicate":
        headers.append(draw(st.sampled_from(BASE)))
        headers.append((b"content-type", b"text/plain"))
    elif choice == "length":
        headers.append((b"content-length", draw(st.sampled_from([b"0", b"-1", b"99999999999", b"abc"]))))
    return headers


def consistent_modern_headers(message: Any) -> Headers:
    """The mirrored headers a correct 2026-07-28 client sends with ``message``."""
    headers: Headers = [(b"mcp-protocol-version", MODERN.encode())]
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return headers
    method = message["method"]
    headers.append((b"mcp-method", header_value(method)))
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    name_param = NAME_PARAM.get(method)
    if name_param and isinstance(params.get(name_param), str):
        headers.append((b"mcp-name", header_value(params[name_param])))
    arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    for argument, header in PARAM_HEADERS.get(str(params.get("name")), {}).items():
        value = arguments.get(argument)
        if isinstance(value, (str, int, float, bool)) and value is not None:
            text = json.dumps(value) if isinstance(value, bool) else str(value)
            headers.append((b"mcp-param-" + header.lower().encode(), header_value(text)))
    return headers


@st.composite
def modern_headers(draw: st.DrawFn, message: Any) -> Headers:
    """Mirrored headers for ``message``: consistent (mostly), or with one missing, wrong or doubled."""
    headers = consistent_modern_headers(message)
    choice = draw(st.sampled_from(["keep"] * 60 + ["drop", "change", "pad", "double", "version"]))
    if choice == "drop" and headers:
        headers.pop(draw(st.integers(0, len(headers) - 1)))
    elif choice == "change" and headers:
        index = draw(st.integers(0, len(headers) - 1))
        headers[index] = (headers[index][0], draw(st.one_of(raw_header_values(), text_values().map(header_value),
                                                            st.just(b"=?base64?!!!?="))))
    elif choice == "pad" and headers:
        index = draw(st.integers(0, len(headers) - 1))
        headers[index] = (headers[index][0], b" \t" + headers[index][1] + b" ")
    elif choice == "double" and headers:
        name, _ = draw(st.sampled_from(headers))
        headers.append((name, draw(raw_header_values())))
    elif choice == "version":
        headers[0] = (b"mcp-protocol-version", draw(st.one_of(st.sampled_from([v.encode() for v in ALL_VERSIONS]),
                                                              raw_header_values())))
    return headers


def encode_body(payload: Any) -> bytes:
    """A JSON body as a client writes it (non-ASCII escaped, so lone surrogates travel too)."""
    return json.dumps(payload).encode("ascii")


@cache
def raw_bodies() -> st.SearchStrategy[bytes]:
    """Bodies that are not JSON-RPC: any bytes, broken JSON, JSON of another shape, empty, huge nesting."""
    return st.one_of(
        st.binary(max_size=64),
        st.sampled_from([b"", b"{", b"[", b"null", b"[]", b"[[]]", b"{}", b'{"jsonrpc":"2.0"}', b"\xff\xfe{}",
                         b'{"a":NaN}', b'{"a":Infinity}', b"1" * 5000, b"[" * 5000, b'"\\ud800"',
                         b'{"jsonrpc":"2.0","id":1,"method":"ping"}' * 2]),
        json_values().map(encode_body),
        st.lists(st.one_of(legacy_messages(), modern_messages()), max_size=4).map(encode_body),
    )
