"""Lifecycle methods of both eras: ``initialize`` and ``ping`` (legacy), ``server/discover`` (modern)."""

from typing import TYPE_CHECKING, Any

from ..context import LOG_LEVELS, RequestContext
from ..errors import InvalidParams, McpError
from ..versions import ALL_VERSIONS, negotiate_legacy_version


if TYPE_CHECKING:
    from ..dispatcher import Dispatcher


def initialize_result(dispatcher: "Dispatcher", params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    """
    The ``InitializeResult`` for a legacy handshake (digest §3.1). The transport creates the
    session from it; ``ctx.protocol_version`` is set to the negotiated version.
    """
    requested = (params or {}).get("protocolVersion")
    if not isinstance(requested, str):
        raise InvalidParams("initialize needs a protocolVersion string")
    ctx.protocol_version = negotiate_legacy_version(requested)
    result: dict[str, Any] = {
        "protocolVersion": ctx.protocol_version,
        "capabilities": dispatcher.backend.capabilities(ctx),
        "serverInfo": dispatcher.backend.server_info(),
    }
    instructions = dispatcher.backend.instructions()
    if instructions:
        result["instructions"] = instructions
    return dispatcher.shape_result("initialize", result, ctx)


async def ping(dispatcher: "Dispatcher", params: Any, ctx: RequestContext) -> dict[str, Any]:
    """``ping`` answers promptly with an empty result (digest §4.10)."""
    return {}


async def set_level(dispatcher: "Dispatcher", params: Any, ctx: RequestContext) -> dict[str, Any]:
    """``logging/setLevel`` stores the session's threshold for ``notifications/message``."""
    level = params.level
    if level not in LOG_LEVELS:
        raise InvalidParams(f"Unknown log level: {level}")
    if ctx.session is None:
        raise McpError("logging/setLevel needs a session")
    await ctx.session.set_log_level(level)
    return {}


async def discover(dispatcher: "Dispatcher", params: Any, ctx: RequestContext) -> dict[str, Any]:
    """``server/discover`` (digest §3.2): versions, capabilities, instructions; cacheable."""
    result: dict[str, Any] = {
        "supportedVersions": list(reversed(ALL_VERSIONS)),
        "capabilities": dispatcher.backend.capabilities(ctx),
    }
    instructions = dispatcher.backend.instructions()
    if instructions:
        result["instructions"] = instructions
    return dispatcher.cacheable(result, ctx)
