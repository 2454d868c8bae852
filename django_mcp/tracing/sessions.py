"""``mcp.server.session.duration``: a legacy session's length, recorded when it ends on purpose."""

from __future__ import annotations

import time
from typing import Any

from ..signals import session_ended
from . import instruments


def on_session_ended(sender: Any, started_at: int | None = None, protocol_version: str | None = None,
                     transport: str | None = None, **kwargs: Any) -> None:
    if started_at is None or not instruments.measuring():
        return
    attributes: dict[str, Any] = {}
    if protocol_version:
        attributes["mcp.protocol.version"] = protocol_version
    if transport is not None:
        attributes["network.protocol.name"] = "http"
    instruments.server_session_duration.record(max(0.0, time.time() - started_at), attributes)


def connect_receivers() -> None:
    """Connect the receiver, once however often it is called."""
    session_ended.connect(on_session_ended, dispatch_uid="django_mcp_tracing.on_session_ended")


def disconnect_receivers() -> None:
    session_ended.disconnect(on_session_ended, dispatch_uid="django_mcp_tracing.on_session_ended")
