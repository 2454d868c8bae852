"""
JSON-RPC 2.0 framing: decoding bodies, telling requests, notifications and responses apart, and
building responses. Shapes follow the base protocol of every MCP revision (MCP spec 2026-07-28, basic#messages).
"""

import json
import re
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json

from .errors import InvalidRequest, McpError, ParseError


Message = dict[str, Any]

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)


# What pydantic-core writes for floats JSON has no spelling for; seeing one of these sends the
# message through the stdlib encoder, which refuses them (RFC 8259 section 6).
_NON_FINITE = (b"NaN", b"Infinity")


def encode(message: Any) -> bytes:
    """
    Serialize a message (or a batch) compactly as UTF-8. Text holding lone surrogates (valid in a
    JSON string escape, not in UTF-8) is written with ``\\u`` escapes instead, so echoing a client's
    odd string back can never fail.

    pydantic-core's Rust encoder writes the common message in a quarter of the stdlib's time. What
    it cannot write as the stdlib would (a lone surrogate, an object JSON has no form for) and what
    it would write wrongly (NaN and the infinities, which it spells out) goes to the stdlib
    encoders, which keep their answers and their errors.
    """
    try:
        data = to_json(message)
    except PydanticSerializationError:
        pass
    else:
        if _NON_FINITE[0] not in data and _NON_FINITE[1] not in data:
            return data
    text = _encoder.encode(message)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _ascii_encoder.encode(message).encode("ascii")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (RFC 8259)")


# The escape of a UTF-16 surrogate, ``\\ud800`` to ``\\udfff``: half of a pair, or a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(value: Any) -> bool:
    """
    Whether a decoded value holds a string (or an object key) with an unpaired surrogate; walks
    without recursion, so the deepest value a body may hold is fine.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def decode(body: bytes | str) -> Any:
    """
    Parse a body into Python values; anything that is not JSON is a :class:`ParseError`, and so is
    JSON whose strings are not Unicode text: ``"\\ud800"`` is grammatical, but an unpaired
    surrogate names no character (RFC 8259 section 8.2; RFC 7493 section 2.1 forbids it), cannot
    be written as UTF-8, and would fail wherever the server stores or looks up the string (a
    database query, a file name) instead of here.
    """
    raw = isinstance(body, bytes)
    if raw:
        # pydantic-core's Rust parser takes a quarter of the stdlib's time, and what it accepts
        # the stdlib accepts alike. What it refuses (bad JSON, lone surrogates, but also valid
        # bodies nested past 200 levels) goes on to the stdlib's parser and the checks below,
        # so both the answers and the errors stay what they were.
        try:
            return from_json(body, allow_inf_nan=False, cache_strings="keys")
        except ValueError:
            pass
    try:
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        value = json.loads(body, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ParseError(f"Parse error: {exc}") from None
    # UTF-8 bytes cannot carry a surrogate, so in a body only an escape can, and bodies seldom
    # hold one: the walk runs only then. A str from Python may hold one as it is.
    suspect = "\\u" in body and _SURROGATE_ESCAPE.search(body) is not None
    if (suspect or not raw and _SURROGATE.search(body) is not None) and has_lone_surrogate(value):
        raise ParseError("Parse error: a string holds an unpaired UTF-16 surrogate (RFC 8259 section 8.2)")
    return value


def is_request(message: Message) -> bool:
    """A message with a method and an id expects a response."""
    return "method" in message and "id" in message


def is_notification(message: Message) -> bool:
    """A message with a method and no id gets no response."""
    return "method" in message and "id" not in message


def is_response(message: Message) -> bool:
    """A result or error answering a request we sent."""
    return "method" not in message and "id" in message and ("result" in message or "error" in message)


def request_id_or_none(message: Any) -> Any:
    """The id to put on an error about ``message``, when it can be read (MCP spec 2026-07-28, basic#messages)."""
    if isinstance(message, dict):
        rid = message.get("id")
        if isinstance(rid, (str, int)) and not isinstance(rid, bool):
            return rid
    return None


def validate_message(message: Any) -> Message:
    """
    Check the JSON-RPC envelope of one message and return it.

    Raises :class:`InvalidRequest` for a non-object, a wrong ``jsonrpc`` member, a bad id (ids are
    strings or integers and never null, MCP spec 2026-07-28, basic#messages), a non-string method,
    or params that are not an object.
    """
    if not isinstance(message, dict):
        raise InvalidRequest("Invalid Request: a JSON-RPC message must be a JSON object")
    if message.get("jsonrpc") != "2.0":
        raise InvalidRequest('Invalid Request: "jsonrpc" must be "2.0"')
    if "id" in message:
        rid = message["id"]
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            raise InvalidRequest("Invalid Request: id must be a string or an integer")
    if "method" in message:
        if not isinstance(message["method"], str):
            raise InvalidRequest("Invalid Request: method must be a string")
        if "params" in message and not isinstance(message["params"], dict):
            raise InvalidRequest("Invalid Request: params must be an object")
    elif not is_response(message):
        raise InvalidRequest("Invalid Request: a message needs a method, or an id with a result or an error")
    elif "result" in message and "error" in message:
        raise InvalidRequest("Invalid Request: a response has a result or an error, not both")
    return message


def result_response(request_id: Any, result: dict[str, Any]) -> Message:
    """A success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: Any, error: McpError | dict[str, Any]) -> Message:
    """An error response; ``request_id`` may be None when the request could not be read."""
    body = error.to_error() if isinstance(error, McpError) else error
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def notification(method: str, params: dict[str, Any] | None = None) -> Message:
    """A notification message."""
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> Message:
    """A request message (the server's own requests to a legacy client)."""
    message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message
