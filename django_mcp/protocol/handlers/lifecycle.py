"""Lifecycle methods of both eras: ``initialize`` and ``ping`` (legacy), ``server/discover`` (modern)."""

from dataclasses import dataclass
from typing import Any

from mcp_types.methods import parse_client_request
from pydantic import ValidationError

from ..context import LOG_LEVELS, RequestContext
from ..errors import InvalidParams, McpError, echo_text
from ..extensions import with_extension_capabilities
from ..versions import ALL_VERSIONS, LEGACY_VERSIONS, Era, negotiate_legacy_version
from .host import HandlerHost


def initialize_result(dispatcher: HandlerHost, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    """
    The ``InitializeResult`` for a legacy handshake (MCP spec 2025-11-25,
    basic/lifecycle#initialization). The transport creates the session from it;
    ``ctx.protocol_version`` is set to the negotiated version.
    """
    requested = (params or {}).get("protocolVersion")
    if not isinstance(requested, str):
        raise InvalidParams("initialize needs a protocolVersion string")
    ctx.protocol_version = negotiate_legacy_version(requested)
    capabilities = with_extension_capabilities(dispatcher.backend.capabilities(ctx), ctx)
    result: dict[str, Any] = {
        "protocolVersion": ctx.protocol_version,
        "capabilities": capabilities,
        "serverInfo": dispatcher.backend.server_info(),
    }
    instructions = dispatcher.backend.instructions()
    if instructions:
        result["instructions"] = instructions
    shaped = dispatcher.shape_result("initialize", result, ctx)
    if "extensions" in capabilities:
        # Extensions are negotiated in capabilities.extensions in every revision (SEP-2133,
        # "Negotiation"); the 2025-11-25 schema does not name the field (nor forbid it), so its
        # model would drop what an installed extension offers.
        shaped["capabilities"] = {**shaped["capabilities"], "extensions": capabilities["extensions"]}
    return shaped


@dataclass(frozen=True, slots=True)
class Handshake:
    """A completed ``initialize``: the answer, and what the session must remember."""

    result: dict[str, Any]
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None


def handshake(dispatcher: HandlerHost, params: dict[str, Any] | None, user: Any, *, pushes: bool = True) -> Handshake:
    """
    Serve ``initialize`` for any transport; raises ``McpError`` (``InvalidParams`` for params that
    do not match the negotiated revision's schema). ``pushes`` is False for a transport that can
    send nothing but answers (:attr:`RequestContext.pushes`).
    """
    ctx = RequestContext(era=Era.LEGACY, protocol_version=LEGACY_VERSIONS[-1], user=user, pushes=pushes)
    result = initialize_result(dispatcher, params, ctx)
    try:
        parsed = parse_client_request("initialize", ctx.protocol_version, params).params
    except ValidationError as exc:
        raise InvalidParams(f"Invalid initialize params: {exc.errors()[0]['msg']}") from None
    capabilities = parsed.capabilities.model_dump(by_alias=True, exclude_none=True)
    # The client's extensions too (SEP-2133): the revision's model does not know the field.
    declared = ((params or {}).get("capabilities") or {}).get("extensions")
    if isinstance(declared, dict):
        capabilities["extensions"] = declared
    return Handshake(result, ctx.protocol_version, capabilities,
                     parsed.client_info.model_dump(by_alias=True, exclude_none=True))


async def ping(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """``ping`` answers promptly with an empty result (MCP spec 2025-11-25, basic/utilities/ping)."""
    return {}


async def set_level(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """``logging/setLevel`` stores the session's threshold for ``notifications/message``."""
    level = params.level
    if level not in LOG_LEVELS:
        raise InvalidParams(f"Unknown log level: {echo_text(level)}")
    if ctx.session is None:
        raise McpError("logging/setLevel needs a session")
    await ctx.session.set_log_level(level)
    return {}


async def discover(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """``server/discover`` (MCP spec 2026-07-28, basic/versioning, SEP-2575): versions, capabilities, instructions;
    cacheable."""
    result: dict[str, Any] = {
        "supportedVersions": list(reversed(ALL_VERSIONS)),
        "capabilities": with_extension_capabilities(dispatcher.backend.capabilities(ctx), ctx),
    }
    instructions = dispatcher.backend.instructions()
    if instructions:
        result["instructions"] = instructions
    return dispatcher.cacheable(result, ctx)
