"""
The span and metric attributes of an MCP operation, named by the OpenTelemetry semantic
conventions for MCP (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/, "Server" and
"Metrics"), and how an error is recorded: a JSON-RPC code that means the client asked for
something the server cannot serve is not the server's failure.
"""

from __future__ import annotations

import json
from typing import Any

from ..conf import mcp_settings
from ..protocol.context import RequestContext
from ..redaction import redact, redacted_names


#: JSON-RPC codes that "SHOULD NOT be considered errors" on the server (the conventions'
#: ``rpc.response.status_code``): parse error, invalid request, method not found, invalid params,
#: resource not found (before 2026-07-28).
CLIENT_CAUSED_CODES = frozenset({-32700, -32600, -32601, -32602, -32002})

#: Where each method names its target, and what the conventions call it.
_NAMED_TARGETS = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
_URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe",
                          "notifications/resources/updated"})

#: Span attributes a metric never carries: per-request values (the URI is opt-in on the metric).
_PER_REQUEST = frozenset({"mcp.resource.uri", "client.address", "client.port", "jsonrpc.request.id", "mcp.session.id"})

#: The longest value a client chose that is kept in an attribute, and the longest arguments' JSON.
MAX_VALUE_LENGTH = 256
MAX_ARGUMENTS_LENGTH = 1000
#: The most prompt arguments recorded, one attribute each.
MAX_PROMPT_VARIABLES = 32


def _clip(value: str) -> str:
    return value if len(value) <= MAX_VALUE_LENGTH else value[:MAX_VALUE_LENGTH] + "…"


def target_of(method: str, params: Any) -> tuple[str | None, str | None]:
    """``(attribute, name)`` of the tool or prompt a request is about, else ``(None, None)``."""
    attribute = _NAMED_TARGETS.get(method)
    if attribute is None or not isinstance(params, dict):
        return None, None
    name = params.get("name")
    return (attribute, _clip(name)) if isinstance(name, str) else (None, None)


def span_name(method: str, target: str | None) -> str:
    """``{mcp.method.name} {target}``, or the method alone where there is no low-cardinality target."""
    return f"{method} {target}" if target else method


def transport_attributes(ctx: RequestContext | None) -> dict[str, Any]:
    """
    ``network.transport`` (``pipe`` for stdio, ``tcp`` for HTTP), ``network.protocol.name`` and
    ``network.protocol.version``; none outside a request.
    """
    if ctx is None:
        return {}
    if ctx.transport == "stdio":
        return {"network.transport": "pipe"}
    attributes: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
    if ctx.http_version:
        attributes["network.protocol.version"] = ctx.http_version
    return attributes


def client_attributes(ctx: RequestContext | None) -> dict[str, Any]:
    """``client.address`` and ``client.port`` of a span (per request: never a metric's)."""
    address = ctx.client_address if ctx is not None else None
    if not address or not address[0]:
        return {}
    attributes: dict[str, Any] = {"client.address": str(address[0])}
    if len(address) > 1 and address[1]:
        attributes["client.port"] = int(address[1])
    return attributes


def operation_attributes(method: str, params: Any, ctx: RequestContext | None) -> dict[str, Any]:
    """The attributes a server span starts with, and the operation metric's (``metric_attributes``)."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if ctx is not None:
        attributes["mcp.protocol.version"] = ctx.protocol_version
    attribute, target = target_of(method, params)
    if attribute is not None:
        attributes[attribute] = target
        if method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
    if method in _URI_METHODS and isinstance(params, dict) and isinstance(params.get("uri"), str):
        attributes["mcp.resource.uri"] = _clip(params["uri"])
    attributes.update(transport_attributes(ctx))
    return attributes


def span_attributes(method: str, params: Any, ctx: RequestContext, request_id: Any) -> dict[str, Any]:
    """:func:`operation_attributes` plus what only a span carries: the request id and the session."""
    attributes = {**operation_attributes(method, params, ctx), **client_attributes(ctx)}
    if request_id is not None:
        attributes["jsonrpc.request.id"] = _clip(str(request_id))
    session = ctx.session
    if session is not None:
        # The session's key inside the server, never the Mcp-Session-Id a client presents.
        attributes["mcp.session.id"] = str(session.id)
    return attributes


def notification_attributes(method: str, params: Any) -> dict[str, Any]:
    """The attributes of a notification the server sends: its method and, for an update, the URI."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if method in _URI_METHODS and isinstance(params, dict) and isinstance(params.get("uri"), str):
        attributes["mcp.resource.uri"] = _clip(params["uri"])
    return attributes


def argument_attributes(method: str, params: Any) -> dict[str, Any]:
    """
    What a client sent, for a span, when ``DJANGO_MCP["TRACING_RECORD_ARGUMENTS"]`` asks (opt-in
    attributes of the conventions): a ``tools/call``'s arguments as JSON
    (``gen_ai.tool.call.arguments``), a ``prompts/get``'s as ``gen_ai.prompt.variable.<name>``,
    redacted as the request log redacts them. Nothing otherwise, and never for a metric.
    """
    if method not in _NAMED_TARGETS or not mcp_settings.TRACING_RECORD_ARGUMENTS or not isinstance(params, dict):
        return {}
    arguments = params.get("arguments")
    if not isinstance(arguments, dict):
        return {}
    arguments = redact(arguments, redacted_names(mcp_settings.REQUEST_LOG_REDACT))
    if method == "tools/call":
        text = json.dumps(arguments, default=str, ensure_ascii=False)
        return {"gen_ai.tool.call.arguments": text if len(text) <= MAX_ARGUMENTS_LENGTH
                else text[:MAX_ARGUMENTS_LENGTH] + "…"}
    return {f"gen_ai.prompt.variable.{_clip(str(name))}": _clip(str(value))
            for name, value in list(arguments.items())[:MAX_PROMPT_VARIABLES]}


def metric_attributes(attributes: dict[str, Any], known_target: bool) -> dict[str, Any]:
    """
    The operation metric's attributes from a span's: no resource URI (opt-in by the conventions),
    and a tool or prompt name only when it named one that exists (``known_target``): what a client
    names must not grow the metric's series.
    """
    kept = {key: value for key, value in attributes.items() if key not in _PER_REQUEST}
    if not known_target:
        kept.pop("gen_ai.tool.name", None)
        kept.pop("gen_ai.prompt.name", None)
    return kept


def error_attributes(code: int) -> tuple[dict[str, Any], bool]:
    """
    The attributes of a JSON-RPC error ``code``, and whether it is the server's failure: the code
    is always ``rpc.response.status_code``, and ``error.type`` only when it counts as an error.
    """
    attributes = {"rpc.response.status_code": str(code)}
    failed = code not in CLIENT_CAUSED_CODES
    if failed:
        attributes["error.type"] = str(code)
    return attributes, failed
