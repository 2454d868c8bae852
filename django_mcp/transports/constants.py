"""Wire constants of the HTTP transports, in one place (lower-case, as ASGI gives header names)."""

MCP_SESSION_ID = b"mcp-session-id"
MCP_PROTOCOL_VERSION = b"mcp-protocol-version"
MCP_METHOD = b"mcp-method"
MCP_NAME = b"mcp-name"
MCP_PARAM_PREFIX = b"mcp-param-"
LAST_EVENT_ID = b"last-event-id"

CONTENT_TYPE_JSON = "application/json"
CONTENT_TYPE_SSE = "text/event-stream"

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-transform"),
    # Proxies such as nginx must not buffer the stream (MCP spec 2026-07-28, basic/transports/streamable-http).
    (b"x-accel-buffering", b"no"),
]
JSON_HEADERS = [(b"content-type", b"application/json")]
