"""
Errors repeat a client's values only as short strings (issue 11): a value nested a thousand levels
deep — an unsupported ``protocolVersion`` in a 2026-07-28 ``_meta``, a ``logLevel`` — used to be
echoed back and broke the encoder (RecursionError: a 500), and megabyte-long names came back whole
(MCP spec 2026-07-28, basic#error-codes; basic/transports/streamable-http).
"""

import json
from typing import Any

import pytest

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.envelope import read_envelope
from django_mcp.protocol.errors import (ECHO_LIMIT, InvalidParams, McpError, ResourceNotFound,
                                        UnsupportedProtocolVersion, bounded_data, echo, echo_text)
from django_mcp.protocol.handlers.lifecycle import handshake
from django_mcp.protocol.versions import Era
from django_mcp.request_state import SignedStateCodec
from django_mcp.sites import McpSite
from django_mcp.transports.http import McpHttpConsumer

from tests.fuzz.asgi_client import request


PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LEVEL = "io.modelcontextprotocol/logLevel"
DEEP = 950  # about as deep as json.loads accepts a body


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def depth(value: Any) -> int:
    level = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        level += 1
    return level


def encoded_far_down(value: Any, frames: int = 150) -> bytes:
    """Encode as the server does, deep inside daphne, Channels and the consumer."""
    return encoded_far_down(value, frames - 1) if frames else jsonrpc.encode(value)


def test_echo_keeps_short_strings_and_drops_everything_else():
    assert echo("2099-01-01") == "2099-01-01"
    assert echo("x" * 10_000) == "x" * ECHO_LIMIT + "\u2026"
    assert [echo(value) for value in (None, 1, 1.5, True, [], {}, nested(DEEP))] == [None] * 7
    assert [echo_text(value) for value in (None, 1, True, [], {})] == [
        "<null>", "<number>", "<boolean>", "<array>", "<object>"]


def test_unsupported_version_nested_deep_is_not_echoed():
    with pytest.raises(UnsupportedProtocolVersion) as info:
        read_envelope({"_meta": {PV: nested(DEEP), CAPS: {}}})
    error = info.value.to_error()
    assert error["code"] == -32022
    assert "requested" not in error["data"] and "2026-07-28" in error["data"]["supported"]
    assert json.loads(encoded_far_down(jsonrpc.error_response(1, error)))["error"] == error


def test_unsupported_version_string_is_echoed_short():
    with pytest.raises(UnsupportedProtocolVersion) as info:
        read_envelope({"_meta": {PV: "9" * 100_000, CAPS: {}}})
    assert info.value.to_error()["data"]["requested"] == "9" * ECHO_LIMIT + "\u2026"


def test_a_deep_log_level_is_named_not_repeated():
    with pytest.raises(InvalidParams) as info:
        read_envelope({"_meta": {PV: "2026-07-28", CAPS: {}, LEVEL: nested(DEEP)}})
    assert info.value.message == "Unknown log level: <array>"


def test_initialize_with_a_deep_version_is_refused_without_echo():
    with pytest.raises(McpError) as info:
        handshake(Dispatcher(McpSite(), state_codec=SignedStateCodec()),
                  {"protocolVersion": nested(DEEP), "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
                  None)
    assert info.value.to_error() == {"code": -32602, "message": "initialize needs a protocolVersion string"}


def test_every_error_is_bounded_whatever_it_was_given():
    error = McpError("m" * 100_000, {"deep": nested(DEEP), "long": "l" * 100_000}).to_error()
    assert len(error["message"]) < 2_100 and len(error["data"]["long"]) < 2_100
    assert depth(error["data"]) <= 10
    assert json.loads(encoded_far_down(error)) == error
    assert bounded_data({"requiredCapabilities": {"elicitation": {"url": {}}}}) == {
        "requiredCapabilities": {"elicitation": {"url": {}}}}
    assert ResourceNotFound("r://" + "x" * 10_000).to_error()["data"]["uri"].endswith("\u2026")


@pytest.mark.django_db
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_long_names_come_back_cut_short(era):
    site = McpSite()
    dispatcher = Dispatcher(site, state_codec=SignedStateCodec())
    name = "n" * 100_000
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if era == "modern":
        params["_meta"] = {PV: "2026-07-28", CAPS: {}}
    ctx = RequestContext(era=Era.MODERN if era == "modern" else Era.LEGACY,
                         protocol_version="2026-07-28" if era == "modern" else "2025-11-25")
    site.tool(name="real")(lambda: "ok")
    answer = await dispatcher.handle_request({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
                                             ctx)
    assert answer["error"]["data"] == {"name": "n" * ECHO_LIMIT + "\u2026"}
    assert len(answer["error"]["message"]) < ECHO_LIMIT + 50


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", ["meta", "log level"])
async def test_a_deep_value_over_http_is_a_400_not_a_500(where):
    # Depths up to what the decoder takes from this stack: the answer nests about as deep as the
    # request did, and is encoded a few frames further down than the request was decoded, so the
    # depths just under the decoder's limit are the ones an echo could not write back.
    app = McpHttpConsumer.as_asgi(site=McpSite())
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"), (b"mcp-method", b"tools/list")]
    if where == "log level":
        headers.append((b"mcp-protocol-version", b"2026-07-28"))
    expected = -32022 if where == "meta" else -32602
    decoded = []
    for levels in range(850, 1000):
        # Written out by hand: json.dumps itself cannot write it from this deep in the test's stack.
        deep = "[" * levels + "]" * levels
        meta = (f'"{PV}":{deep},"{CAPS}":{{}}' if where == "meta"
                else f'"{PV}":"2026-07-28","{CAPS}":{{}},"{LEVEL}":{deep}')
        body = ('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{' + meta + '}}}').encode()
        answer = await request(app, "POST", "/mcp", headers, body)
        assert answer.status == 400, (levels, answer.status)
        error = json.loads(answer.body)["error"]
        assert error["code"] in (-32700, expected), (levels, error)
        if error["code"] == expected:
            assert depth(error.get("data")) <= 2  # {"supported": [...]} at most
            decoded.append(levels)
    # Every depth the decoder took was answered, up to its limit (Python 3.11 stops short of 1,000
    # from this stack; 3.13's decoder takes them all): no depth in the window was a 500.
    assert decoded and decoded == list(range(850, decoded[-1] + 1))
