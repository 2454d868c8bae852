"""
JSON-RPC 2.0 framing: decoding bodies, telling requests, notifications and responses apart, and
building responses. Shapes follow the base protocol of every MCP revision (MCP spec 2026-07-28, basic#messages).
"""

import json
from typing import Any

from .errors import InvalidRequest, McpError, ParseError


Message = dict[str, Any]

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def encode(message: Any) -> bytes:
    """
    Serialize a message (or a batch) compactly as UTF-8. Text holding lone surrogates (valid in a
    JSON string escape, not in UTF-8) is written with ``\\u`` escapes instead, so echoing a client's
    odd string back can never fail.
    """
    text = _encoder.encode(message)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _ascii_encoder.encode(message).encode("ascii")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (RFC 8259)")


def decode(body: bytes | str) -> Any:
    """Parse a body into Python values; anything that is not JSON is a :class:`ParseError`."""
    try:
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        return json.loads(body, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ParseError(f"Parse error: {exc}") from None


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
