"""
The receivers that turn the core's signals into metrics. A request or a tool call finds its
:class:`~django_mcp.metrics.instruments.Timings` by its label values and adds itself: a key, a
dictionary look-up and three additions, no lock and no ``prometheus_client`` object per call.
"""

from typing import Any

from ..protocol.dispatcher import HANDLERS
from ..signals import (authentication_failed, channel_layer_failed, request_refused, request_served, session_ended,
                       session_started, tool_called)
from . import instruments


# Label values come from this set, never from what a client sent: an unknown method is "other".
# ``initialize`` is served by the transports (it opens the session), not by a dispatcher handler.
KNOWN_METHODS = frozenset({*HANDLERS, "initialize"})


def on_request_served(sender: Any, ctx: Any, message: dict[str, Any], outcome: str, error_code: int | None,
                      duration_ms: float, **kwargs: Any) -> None:
    method = message.get("method")
    if method not in KNOWN_METHODS:
        method = "other"  # what a client names must not grow the label sets
    key = (method, ctx.era.value, ctx.transport, outcome, "" if error_code is None else str(error_code))
    timings = instruments.REQUEST_TIMINGS.get(key)
    if timings is None:
        timings = instruments.REQUEST_TIMINGS[key] = instruments.Timings()
    timings.observe(duration_ms / 1000)


def on_tool_called(sender: Any, call: Any, outcome: str, duration_ms: float, **kwargs: Any) -> None:
    key = (call.tool.name, outcome)  # a tool that exists: the signal is sent only for those
    timings = instruments.TOOL_TIMINGS.get(key)
    if timings is None:
        timings = instruments.TOOL_TIMINGS[key] = instruments.Timings()
    timings.observe(duration_ms / 1000)


def on_session_started(sender: Any, transport: str, **kwargs: Any) -> None:
    instruments.SESSIONS_STARTED.labels(transport).inc()


def on_session_ended(sender: Any, **kwargs: Any) -> None:
    instruments.SESSIONS_ENDED.inc()


def on_request_refused(sender: Any, status: int, transport: str, **kwargs: Any) -> None:
    instruments.REFUSED.labels(str(status), transport).inc()


def on_authentication_failed(sender: Any, transport: str, reason: str, **kwargs: Any) -> None:
    instruments.AUTHENTICATION_FAILURES.labels(transport, reason).inc()


def on_channel_layer_failed(sender: Any, operation: str, **kwargs: Any) -> None:
    instruments.CHANNEL_LAYER_ERRORS.labels(operation).inc()


RECEIVERS = [
    (request_served, on_request_served), (tool_called, on_tool_called), (session_started, on_session_started),
    (session_ended, on_session_ended), (request_refused, on_request_refused),
    (authentication_failed, on_authentication_failed), (channel_layer_failed, on_channel_layer_failed),
]


def connect_receivers() -> None:
    """Connect every receiver, once however often it is called."""
    for signal, receiver in RECEIVERS:
        signal.connect(receiver, dispatch_uid=f"django_mcp_metrics.{receiver.__name__}")


def disconnect_receivers() -> None:
    """Disconnect them all (tests and the benchmarks measure a worker without metrics)."""
    for signal, receiver in RECEIVERS:
        signal.disconnect(receiver, dispatch_uid=f"django_mcp_metrics.{receiver.__name__}")
