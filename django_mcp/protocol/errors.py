"""
JSON-RPC and MCP errors as exceptions.

Raising one of these anywhere below the dispatcher produces a JSON-RPC error response with its
code; the transport maps codes to HTTP statuses (see ``transports/status.py``). Subclasses set only
class attributes, as DRF's ``APIException`` family does.
"""

from typing import Any


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# <= 2025-11-25 only; 2026-07-28 replaced it with INVALID_PARAMS (MCP spec 2026-07-28, server/resources).
RESOURCE_NOT_FOUND_LEGACY = -32002
# 2026-07-28 MCP range (MCP spec 2026-07-28, basic#error-codes).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022


# How much of a client's value an error may repeat back. A request body may be megabytes, and a
# value the client chose may nest a thousand levels deep (which the JSON encoder cannot write back
# without a RecursionError): errors repeat strings only, cut to this many characters.
ECHO_LIMIT = 512
# The longest message an error carries, and the deepest ``data``: everything an error says is
# bounded even when a message was built from a client's value somewhere else.
MESSAGE_LIMIT = 2000
DATA_DEPTH_LIMIT = 8


def echo(value: Any, limit: int = ECHO_LIMIT) -> str | None:
    """
    A client's value fit to repeat in an error message or ``data``: a string, cut to ``limit``
    characters (with an ellipsis when cut); None for anything that is not a string.
    """
    if not isinstance(value, str):
        return None
    return value if len(value) <= limit else value[:limit] + "\u2026"


def echo_text(value: Any, limit: int = ECHO_LIMIT) -> str:
    """:func:`echo` for an f-string: a value that is not a string is named by its JSON type only."""
    echoed = echo(value, limit)
    return echoed if echoed is not None else f"<{_json_type(value)}>"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def bounded_data(value: Any, depth: int = 0) -> Any:
    """
    ``data`` as an error may send it: strings cut to :data:`MESSAGE_LIMIT`, and containers nested
    deeper than :data:`DATA_DEPTH_LIMIT` dropped (None), so encoding it can never recurse without
    end. What the server builds itself (capabilities, version lists) is far shallower.
    """
    if isinstance(value, str):
        return echo(value, MESSAGE_LIMIT)
    if isinstance(value, dict):
        if depth >= DATA_DEPTH_LIMIT:
            return None
        return {str(key): bounded_data(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if depth >= DATA_DEPTH_LIMIT:
            return None
        return [bounded_data(item, depth + 1) for item in value]
    return value


class McpError(Exception):
    """Root of every error that becomes a JSON-RPC error response."""

    code: int = INTERNAL_ERROR
    default_message: str = "Internal error"

    def __init__(self, message: str | None = None, data: Any = None, *, code: int | None = None) -> None:
        self.message = message or self.default_message
        self.data = data
        if code is not None:
            self.code = code
        super().__init__(self.message)

    def to_error(self) -> dict[str, Any]:
        """
        The JSON-RPC ``error`` member for this exception, bounded (:func:`bounded_data`) whatever
        the code that raised it put in: an error must always be sendable (MCP spec 2026-07-28,
        basic#error-codes).
        """
        message = echo(self.message, MESSAGE_LIMIT) or self.default_message
        error: dict[str, Any] = {"code": self.code, "message": message}
        if self.data is not None:
            error["data"] = bounded_data(self.data)
        return error


class ParseError(McpError):
    """The body is not valid JSON."""

    code = PARSE_ERROR
    default_message = "Parse error"


class InvalidRequest(McpError):
    """The JSON is not a valid JSON-RPC message for this protocol revision."""

    code = INVALID_REQUEST
    default_message = "Invalid Request"


class MethodNotFound(McpError):
    """The method does not exist in the request's protocol revision, or its capability is not offered."""

    code = METHOD_NOT_FOUND
    default_message = "Method not found"


class InvalidParams(McpError):
    """The params do not match the method's schema, or name something that does not exist."""

    code = INVALID_PARAMS
    default_message = "Invalid params"


class InternalError(McpError):
    """An unexpected failure on the server."""

    code = INTERNAL_ERROR
    default_message = "Internal error"


class ResourceNotFound(McpError):
    """No resource has this URI; the dispatcher picks the era's code (-32002 legacy, -32602 modern)."""

    code = RESOURCE_NOT_FOUND_LEGACY
    default_message = "Resource not found"

    def __init__(self, uri: str) -> None:
        super().__init__(f"Resource not found: {echo_text(uri)}", {"uri": echo(uri)})


class HeaderMismatch(McpError):
    """A 2026-07-28 request header is missing, malformed or disagrees with the body."""

    code = HEADER_MISMATCH
    default_message = "Header mismatch"


class MissingClientCapability(McpError):
    """The request needs a client capability that the client did not declare."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    default_message = "Missing required client capability"

    def __init__(self, capabilities: dict[str, Any], message: str | None = None) -> None:
        names = ", ".join(sorted(capabilities))
        super().__init__(message or f"This request needs the client capability: {names}",
                         {"requiredCapabilities": capabilities})


class UnsupportedProtocolVersion(McpError):
    """The request names a protocol revision this server does not serve."""

    code = UNSUPPORTED_PROTOCOL_VERSION
    default_message = "Unsupported protocol version"

    def __init__(self, requested: Any, supported: list[str]) -> None:
        # ``requested`` is a string in the error's schema (MCP spec 2026-07-28, basic#error-codes);
        # any other value the client sent is not repeated back.
        data: dict[str, Any] = {"supported": supported}
        if isinstance(requested, str):
            data["requested"] = echo(requested)
        super().__init__(data=data)
