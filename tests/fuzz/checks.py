"""
The invariant every fuzzed exchange must keep: the server answers with valid JSON-RPC (a response,
a batch of responses, 202, or an SSE stream whose events are JSON-RPC messages) or with a 4xx whose
body is a JSON-RPC error — never a 5xx, never an internal error, never an exception that escapes,
never a hang (MCP spec 2026-07-28, basic#messages and basic/transports/streamable-http; MCP spec
2025-11-25, basic/transports#streamable-http; MCP spec 2024-11-05, basic/transports#http-with-sse).
"""

import json
from typing import Any

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.errors import INTERNAL_ERROR

JSON = "application/json"
SSE = "text/event-stream"


# The messages of the dispatcher's -32603 answers to what it did not expect (protocol/dispatcher.py).
UNEXPECTED = frozenset({"Internal error", "The server produced an invalid result"})


class InvariantBroken(AssertionError):
    """The server's answer breaks the fuzzing invariant."""


def require(condition: bool, what: str, evidence: Any) -> None:
    """Fail with ``what`` and a short view of ``evidence`` unless ``condition`` holds."""
    if not condition:
        shown = repr(evidence)
        raise InvariantBroken(f"{what}: {shown[:1500]}")


# The server encodes answers deep inside daphne, Channels and the consumer: an answer must still
# be encodable this many frames further down than the test that checks it.
SERVER_STACK_FRAMES = 120
# Error data the server builds (capabilities, version lists) is shallow; deeper means a client's
# value was repeated back.
MAX_ERROR_DATA_DEPTH = 10


def _encode_deep_in_the_stack(value: Any, frames: int) -> bytes:
    if frames:
        return _encode_deep_in_the_stack(value, frames - 1)
    return jsonrpc.encode(value)


def round_trips(value: Any) -> Any:
    """The value as a client would read it: encoded by the server's encoder, decoded again."""
    try:
        return json.loads(_encode_deep_in_the_stack(value, SERVER_STACK_FRAMES))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvariantBroken(f"the server could not encode its own answer ({type(exc).__name__}: {exc})") from None


def depth(value: Any) -> int:
    """How deep a JSON value nests (a scalar is 0), without recursing."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return deepest


def check_error_member(error: Any, evidence: Any) -> None:
    """A JSON-RPC error object with an integer code and a string message; never an internal error."""
    require(isinstance(error, dict), "error is not an object", evidence)
    require(isinstance(error.get("code"), int) and not isinstance(error.get("code"), bool), "error code", evidence)
    require(isinstance(error.get("message"), str), "error message", evidence)
    require(depth(error.get("data")) <= MAX_ERROR_DATA_DEPTH, "error data nests deeper than the server builds it",
            evidence)
    # What an exception nobody expected becomes (the dispatcher logged a traceback), and a result
    # the server built against the schema. A -32603 the server means says what went wrong.
    require(not (error["code"] == INTERNAL_ERROR and error["message"] in UNEXPECTED),
            "an internal error (an unhandled exception, or an invalid result, on the server)", evidence)


def check_response(response: Any, request_id: Any = "any", era: str | None = None) -> dict[str, Any]:
    """
    One JSON-RPC response: ``jsonrpc`` 2.0, the request's id (``"any"``: not known to the caller,
    None: the request could not be read), exactly one of result and error.
    """
    response = round_trips(response)
    require(isinstance(response, dict), "a response is not an object", response)
    require(response.get("jsonrpc") == "2.0", "jsonrpc member", response)
    require("id" in response, "a response without an id", response)
    if request_id != "any":
        require(response["id"] == request_id, f"response id is not {request_id!r}", response)
    require(("result" in response) != ("error" in response), "a response needs exactly one of result, error",
            response)
    if "error" in response:
        check_error_member(response["error"], response)
    else:
        require(response["id"] is not None, "a result with a null id", response)
        result = response["result"]
        require(isinstance(result, dict), "a result is not an object", response)
        if era == "modern":
            require(result.get("resultType") in ("complete", "input_required"), "2026-07-28 resultType", response)
        elif era == "legacy":
            require("resultType" not in result, "a legacy result with a resultType", response)
    return response


def check_server_message(message: Any) -> dict[str, Any]:
    """Anything the server may put on a stream: a response, a notification, or its own request."""
    message = round_trips(message)
    require(isinstance(message, dict) and message.get("jsonrpc") == "2.0", "not a JSON-RPC message", message)
    if "method" in message:
        require(isinstance(message["method"], str), "method is not a string", message)
        require(isinstance(message.get("params", {}), dict), "params is not an object", message)
        return message
    return check_response(message)


def parse_sse(body: bytes) -> list[tuple[str, str]]:
    """The (event name, data) of each event of an SSE body; comments and ids are skipped."""
    events = []
    text = body.decode("utf-8")
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif line.startswith("event:"):
                name = line[6:].strip()
        if data:
            events.append((name, "\n".join(data)))
    return events


def check_sse_events(body: bytes) -> list[dict[str, Any]]:
    """Every ``message`` event of an SSE body is a JSON-RPC message; returns them in order."""
    try:
        events = parse_sse(body)
    except UnicodeDecodeError as exc:
        raise InvariantBroken(f"an SSE stream that is not UTF-8: {exc}") from None
    messages = []
    for name, data in events:
        # The endpoint event of HTTP+SSE names a URL; an event with empty data primes a resumable
        # stream (MCP spec 2025-11-25, basic/transports#resumability-and-redelivery): no message.
        if name == "endpoint" or not data:
            continue
        try:
            payload = json.loads(data)
        except ValueError:
            raise InvariantBroken(f"an SSE event that is not JSON: {data[:300]!r}") from None
        messages.append(check_server_message(payload))
    return messages


def content_type(headers: dict[bytes, bytes]) -> str:
    return headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()


def check_http_answer(status: int, headers: dict[bytes, bytes], body: bytes, era: str | None = None) -> Any:
    """
    The invariant for one HTTP answer. Returns what it carried: the response (or batch) of a JSON
    answer, the messages of an SSE stream, or None.
    """
    require(100 <= status < 500, f"HTTP status {status}", body[:500])
    kind = content_type(headers)
    if status >= 400:
        require(kind == JSON, f"a {status} without a JSON body", (headers, body[:300]))
        answer = check_response(json.loads(body))
        require("error" in answer, f"a {status} whose body is not an error", answer)
        return answer
    if status == 202 or not body and kind != SSE:
        return None
    if kind == SSE:
        return check_sse_events(body)
    require(kind == JSON, f"a {status} answer that is neither JSON nor SSE", (headers, body[:300]))
    payload = json.loads(body)
    if isinstance(payload, list):
        require(bool(payload), "an empty batch answer", payload)
        return [check_response(item, era=era) for item in payload]
    return check_response(payload, era=era)
