"""
Requests refused before they reach the dispatcher: each is an error class with the HTTP status it
is sent with, and its body is a JSON-RPC error without an id (MCP spec 2025-11-25,
basic/transports#streamable-http; the statuses follow the official SDKs where the spec names none).
"""

from ..protocol.errors import InvalidRequest


class Refusal(InvalidRequest):
    """An HTTP-level refusal: ``status`` goes on the response, the rest in the JSON-RPC error."""

    status = 400
    default_message = "Bad Request"


class MissingSessionId(Refusal):
    default_message = "Bad Request: missing Mcp-Session-Id header"


class SessionNotFound(Refusal):
    """Unknown, ended or expired session — or one that belongs to another user or transport."""

    status = 404
    default_message = "Session not found"


class MethodNotAllowed(Refusal):
    status = 405
    default_message = "Method Not Allowed"


class NotAcceptable(Refusal):
    status = 406
    default_message = "Not Acceptable"


class PayloadTooLarge(Refusal):
    status = 413
    default_message = "Request body too large"


class UnsupportedMediaType(Refusal):
    status = 415
    default_message = "Unsupported Media Type: Content-Type must be application/json"


class ForbiddenOrigin(Refusal):
    """DNS-rebinding protection: a browser page from a foreign origin (2025-11-25: 403)."""

    status = 403
    default_message = "Forbidden: invalid Origin header"


class MisdirectedHost(Refusal):
    """The Host header names another server (RFC 9110 §15.5.20)."""

    status = 421
    default_message = "Invalid Host header"


class LimitExceeded(Refusal):
    """
    A request that would make the server hold more than a limit allows (sessions, streams, batch
    length; ``DJANGO_MCP["MAX_*"]``). 429, so clients back off instead of retrying at once.
    """

    status = 429
    default_message = "Too Many Requests"
