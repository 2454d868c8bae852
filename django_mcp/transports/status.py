"""Which HTTP status carries a JSON-RPC error, per era (MCP spec 2026-07-28, basic/transports/streamable-http, status codes; basic#error-codes)."""

from ..protocol import errors
from ..protocol.versions import Era


_MODERN_400 = {
    errors.PARSE_ERROR,
    errors.INVALID_REQUEST,
    errors.INVALID_PARAMS,
    errors.HEADER_MISMATCH,
    errors.MISSING_REQUIRED_CLIENT_CAPABILITY,
    errors.UNSUPPORTED_PROTOCOL_VERSION,
}


def status_for_error(code: int, era: Era) -> int:
    """
    2026-07-28 gives errors their own statuses: 404 for an unknown method, 400 for bad envelopes,
    headers, params, versions and capabilities. In the legacy era a JSON-RPC error is an ordinary
    200 response, except for messages we could not read at all.
    """
    if era is Era.MODERN:
        if code == errors.METHOD_NOT_FOUND:
            return 404
        if code in _MODERN_400:
            return 400
        return 200
    if code in (errors.PARSE_ERROR, errors.INVALID_REQUEST):
        return 400
    return 200
