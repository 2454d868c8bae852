"""JSON-RPC 2.0 framing (MCP spec 2026-07-28, basic#messages)."""

import json

import pytest

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.errors import InvalidParams, InvalidRequest, ParseError
from django_mcp.transports.http import McpHttpConsumer

from tests.fuzz.asgi_client import request


def test_decode_bytes_and_str():
    assert jsonrpc.decode(b'{"a": 1}') == {"a": 1}
    assert jsonrpc.decode('[1, "x"]') == [1, "x"]
    assert jsonrpc.decode('{"t": "h\\u00e9"}'.encode()) == {"t": "hé"}


@pytest.mark.parametrize("body", [b"", b"{", b"not json", b"\xff\xfe{}", "{'single': 1}"])
def test_decode_rejects_what_is_not_json(body):
    with pytest.raises(ParseError) as info:
        jsonrpc.decode(body)
    assert info.value.code == -32700
    assert info.value.message.startswith("Parse error")


def test_encode_is_compact_utf8():
    encoded = jsonrpc.encode({"jsonrpc": "2.0", "id": 1, "result": {"text": "é"}})
    assert encoded == '{"jsonrpc":"2.0","id":1,"result":{"text":"é"}}'.encode()
    assert json.loads(encoded) == {"jsonrpc": "2.0", "id": 1, "result": {"text": "é"}}


def test_encode_refuses_nan():
    with pytest.raises(ValueError):
        jsonrpc.encode({"x": float("nan")})


@pytest.mark.parametrize("value", [float("inf"), float("-inf")])
def test_encode_refuses_the_infinities(value):
    with pytest.raises(ValueError):
        jsonrpc.encode({"x": [value]})


def test_text_spelling_nan_or_infinity_is_only_text():
    # The fast encoder's output is checked for its spelling of NaN; text holding the word takes
    # the stdlib encoder and comes out the same.
    message = {"text": "NaN and Infinity", "n": 1.5}
    assert jsonrpc.encode(message) == b'{"text":"NaN and Infinity","n":1.5}'


def test_encode_writes_what_the_stdlib_writes():
    message = {"jsonrpc": "2.0", "id": 12345678901234567890, "result": {
        "t": (1, "\u2028\x7f\u00e9\"\\"), "k": {"1": None, "b": True, "": [], "o": {}}}}
    assert jsonrpc.encode(message) == json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    # Floats keep their value; only an exponent's spelling may differ (2.5e-7, not 2.5e-07).
    floats = [0.1, 1e16, -0.0, 2.5e-7, 1.7976931348623157e308, 5e-324]
    assert json.loads(jsonrpc.encode(floats)) == floats


def test_a_value_json_cannot_hold_is_still_a_type_error():
    with pytest.raises(TypeError):
        jsonrpc.encode({"x": object()})


@pytest.mark.parametrize("depth", [199, 201, 900])
def test_decode_takes_bodies_as_deep_as_the_stdlib_does(depth):
    body = "[" * depth + "1" + "]" * depth
    assert jsonrpc.decode(body.encode()) == json.loads(body)


@pytest.mark.parametrize("body", [b'{"a":1} x', b'{"a":1,}', b'"\x01"', b"[NaN]", b"[Infinity]", b"\xef\xbb\xbf{}"])
def test_decode_refuses_what_the_stdlib_refuses(body):
    with pytest.raises(ParseError):
        jsonrpc.decode(body)


def test_encode_batch():
    assert jsonrpc.encode([{"a": 1}, {"b": 2}]) == b'[{"a":1},{"b":2}]'


def test_kinds_of_message():
    request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    result = {"jsonrpc": "2.0", "id": 1, "result": {}}
    error = {"jsonrpc": "2.0", "id": "a", "error": {"code": -1, "message": "x"}}
    assert jsonrpc.is_request(request) and not jsonrpc.is_notification(request) and not jsonrpc.is_response(request)
    assert jsonrpc.is_notification(notification) and not jsonrpc.is_request(notification)
    assert not jsonrpc.is_response(notification)
    assert jsonrpc.is_response(result) and not jsonrpc.is_request(result)
    assert jsonrpc.is_response(error)
    # An id alone is not a response.
    assert not jsonrpc.is_response({"jsonrpc": "2.0", "id": 1})


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"id": 7}, 7),
        ({"id": "abc"}, "abc"),
        ({"id": 0}, 0),
        ({"id": None}, None),
        ({"id": True}, None),
        ({"id": 1.5}, None),
        ({"id": [1]}, None),
        ({}, None),
        ([{"id": 1}], None),
        ("text", None),
    ],
)
def test_request_id_or_none(message, expected):
    assert jsonrpc.request_id_or_none(message) == expected
    if expected is None:
        assert jsonrpc.request_id_or_none(message) is None


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}},
    ],
)
def test_validate_message_accepts_valid_messages(message):
    assert jsonrpc.validate_message(message) is message


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ([], "JSON object"),
        ("ping", "JSON object"),
        ({"id": 1, "method": "ping"}, '"jsonrpc" must be "2.0"'),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, '"jsonrpc" must be "2.0"'),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, "id must be"),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, "id must be"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, "id must be"),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, "id must be"),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, "method must be a string"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]}, "params must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": None}, "params must be an object"),
        ({"jsonrpc": "2.0"}, "needs a method"),
        ({"jsonrpc": "2.0", "id": 1}, "needs a method"),
    ],
)
def test_validate_message_rejects(message, fragment):
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.validate_message(message)
    assert info.value.code == -32600
    assert fragment in info.value.message


def test_validate_message_rejects_response_with_result_and_error():
    with pytest.raises(InvalidRequest):
        jsonrpc.validate_message({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}})


def test_result_response():
    assert jsonrpc.result_response(5, {"x": 1}) == {"jsonrpc": "2.0", "id": 5, "result": {"x": 1}}


def test_error_response_from_exception_and_dict():
    from_exc = jsonrpc.error_response("r1", InvalidParams("bad", {"k": 1}))
    assert from_exc == {"jsonrpc": "2.0", "id": "r1", "error": {"code": -32602, "message": "bad", "data": {"k": 1}}}
    from_dict = jsonrpc.error_response(None, {"code": -32600, "message": "m"})
    assert from_dict == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "m"}}


def test_error_without_data_has_no_data_member():
    assert jsonrpc.error_response(1, InvalidRequest())["error"] == {"code": -32600, "message": "Invalid Request"}


def test_notification_and_request_builders():
    assert jsonrpc.notification("notifications/progress", {"progress": 1}) == {
        "jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    assert jsonrpc.notification("notifications/tools/list_changed") == {
        "jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert jsonrpc.request("srv-1", "roots/list") == {"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}
    assert jsonrpc.request(2, "sampling/createMessage", {"maxTokens": 5})["params"] == {"maxTokens": 5}


# Unpaired surrogates (issue 11, found by the long fuzz run) -----------------------------------


@pytest.mark.parametrize("body", [rb'"\ud800"', rb'{"name": "a\udfffb"}', rb'{"\ud800": 1}', rb'[[["x\uDBFF"]]]',
                                  '"\ud800"', rb'{"jsonrpc": "2.0", "id": 1, "method": "prompts/get", '
                                  rb'"params": {"name": "\ud800"}}'])
def test_a_string_with_an_unpaired_surrogate_is_a_parse_error(body):
    # Grammatical JSON, but no Unicode text (RFC 8259 section 8.2): it used to reach a database
    # lookup of the name and fail there, as an internal error.
    with pytest.raises(ParseError, match="unpaired UTF-16 surrogate"):
        jsonrpc.decode(body)


@pytest.mark.parametrize(("body", "value"), [(rb'"\ud83d\ude00"', "\U0001f600"), (rb'"\\ud800"', "\\ud800"),
                                             ('"\U0001f600"'.encode(), "\U0001f600"), (rb'"\u00e9"', "\u00e9")])
def test_surrogate_pairs_and_escaped_backslashes_are_text(body, value):
    assert jsonrpc.decode(body) == value
    assert not jsonrpc.has_lone_surrogate({"k": [value]})


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("method", ["prompts/get", "completion/complete"])
async def test_an_unpaired_surrogate_over_http_is_a_400_parse_error(method):
    # The cases the long fuzz run found: a prompt named "\ud800" on the default site.
    params = ({"name": "SUR"} if method == "prompts/get"
              else {"ref": {"type": "ref/prompt", "name": "SUR"}, "argument": {"name": "a", "value": ""}})
    message = {"jsonrpc": "2.0", "id": 3, "method": method,
               "params": {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                              "io.modelcontextprotocol/clientCapabilities": {}}}}
    body = json.dumps(message).replace('"SUR"', r'"\ud800"').encode()
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", b"2026-07-28"),
               (b"mcp-method", method.encode())]
    answer = await request(McpHttpConsumer.as_asgi(), "POST", "/mcp", headers, body)
    assert answer.status == 400
    assert json.loads(answer.body)["error"]["code"] == -32700
