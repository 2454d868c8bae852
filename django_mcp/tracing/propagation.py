"""
Trace context in and out of MCP messages: ``params._meta`` carries ``traceparent``,
``tracestate`` and ``baggage`` unprefixed (MCP spec 2026-07-28, basic#meta, "OpenTelemetry trace
context"; SEP-414), read and written with the project's configured propagators; the HTTP
request's headers carry the transport's context.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter


class _HeaderGetter(Getter[Mapping[bytes, str]]):
    """Reads the ASGI scope's headers (lower-case byte names) as a propagator's carrier."""

    def get(self, carrier: Mapping[bytes, str], key: str) -> list[str] | None:
        value = carrier.get(key.lower().encode("latin-1"))
        return [value] if value is not None else None

    def keys(self, carrier: Mapping[bytes, str]) -> list[str]:
        return [name.decode("latin-1") for name in carrier]


_HEADERS = _HeaderGetter()


def _valid(context: Context) -> Context | None:
    return context if trace.get_current_span(context).get_span_context().is_valid else None


def from_meta(params: Any) -> Context | None:
    """The context a message's ``params._meta`` carries, or None (absent, malformed or invalid)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or "traceparent" not in meta:
        return None
    # Only string values reach the propagator: the carrier is the client's JSON.
    carrier = {key: value for key, value in meta.items() if isinstance(value, str)}
    try:
        return _valid(propagate.extract(carrier))
    except (TypeError, ValueError):
        return None


def from_headers(headers: Mapping[bytes, str] | None) -> Context | None:
    """The context the HTTP request's headers carry (a ``traceparent``), or None."""
    if not headers or b"traceparent" not in headers:
        return None
    try:
        return _valid(propagate.extract(headers, getter=_HEADERS))
    except (TypeError, ValueError):
        return None


def ambient() -> Context | None:
    """The current context when a span is current in it (an ASGI instrumentation's), else None."""
    return _valid(context.get_current())


def with_context_in_meta(params: dict[str, Any] | None, carried: Context) -> dict[str, Any]:
    """A copy of ``params`` whose ``_meta`` carries the context ``carried`` (a span just started)."""
    params = dict(params or {})
    meta = dict(params.get("_meta") or {})
    propagate.inject(meta, context=carried)
    params["_meta"] = meta
    return params
