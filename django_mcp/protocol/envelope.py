"""Validation of the per-request ``_meta`` envelope of 2026-07-28 (MCP spec 2026-07-28, basic#messages; MCP spec
2026-07-28, basic/versioning, SEP-2575)."""

from dataclasses import dataclass
from typing import Any

from .context import LOG_LEVELS
from .errors import InvalidParams, UnsupportedProtocolVersion, echo_text
from .versions import (
    ALL_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
)


@dataclass(slots=True, frozen=True)
class ModernEnvelope:
    """What a modern request says about itself in ``params._meta``."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None


def modern_version_of(message: dict[str, Any]) -> Any:
    """The ``_meta`` protocol version of a message, or None when it carries none."""
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict):
            return meta.get(META_PROTOCOL_VERSION)
    return None


def read_envelope(params: Any) -> ModernEnvelope:
    """
    Check the required ``_meta`` keys: a missing one is ``-32602`` (HTTP 400), a version we do not
    serve statelessly is ``-32022`` with the versions we do serve (MCP spec 2026-07-28, basic/transports/streamable-http
    table).
    """
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise InvalidParams("Missing params._meta: 2026-07-28 requests carry their protocol version and "
                            "client capabilities in _meta")
    version = meta.get(META_PROTOCOL_VERSION)
    if version is None:
        raise InvalidParams(f"Missing _meta[{META_PROTOCOL_VERSION!r}]")
    if version not in MODERN_VERSIONS:
        raise UnsupportedProtocolVersion(version, list(reversed(ALL_VERSIONS)))
    capabilities = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise InvalidParams(f"Missing or invalid _meta[{META_CLIENT_CAPABILITIES!r}]")
    client_info = meta.get(META_CLIENT_INFO)
    log_level = meta.get(META_LOG_LEVEL)
    if log_level is not None and log_level not in LOG_LEVELS:
        raise InvalidParams(f"Unknown log level: {echo_text(log_level)}")
    return ModernEnvelope(version, capabilities, client_info if isinstance(client_info, dict) else None, log_level)
