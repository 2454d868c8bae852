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
        """The JSON-RPC ``error`` member for this exception."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
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
        super().__init__(f"Resource not found: {uri}", {"uri": uri})


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
        super().__init__(data={"supported": supported, "requested": requested})
