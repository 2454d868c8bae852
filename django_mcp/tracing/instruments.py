"""
The OpenTelemetry instruments of the conventions (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/,
"Metrics"), with their recommended bucket boundaries, and the question every observation asks
first: is a provider configured at all? The API's default providers are proxies that record
nothing until the project installs an SDK's; until then the app steps aside.
"""

from __future__ import annotations

import os

from opentelemetry import metrics, trace

from ..backend import package_version


try:  # private in the API, so looked up with care: where it keeps the meter provider once set
    # (read directly: see tracing() below), and its stand-in until an SDK's provider is set.
    from opentelemetry.metrics import _internal as metrics_api
    from opentelemetry.metrics._internal import _ProxyMeterProvider as ProxyMeterProvider
except ImportError:  # pragma: no cover - a future API that moved them: always ask get_meter_provider()
    metrics_api = None  # type: ignore[assignment]
    ProxyMeterProvider = metrics.NoOpMeterProvider  # type: ignore[assignment,misc]

#: Seconds: the conventions' ``ExplicitBucketBoundaries`` for every MCP duration metric.
DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

SCOPE = "django_mcp"


tracer = trace.get_tracer(SCOPE, package_version())
meter = metrics.get_meter(SCOPE, package_version())

server_operation_duration = meter.create_histogram(
    "mcp.server.operation.duration", unit="s",
    description="MCP request or notification duration as observed on the receiver from the time it was received "
                "until the result or ack is sent.",
    explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
client_operation_duration = meter.create_histogram(
    "mcp.client.operation.duration", unit="s",
    description="The duration of the MCP request or notification as observed on the sender from the time it was "
                "sent until the response or ack is received.",
    explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
server_session_duration = meter.create_histogram(
    "mcp.server.session.duration", unit="s", description="The duration of the MCP session as observed on the MCP server.",
    explicit_bucket_boundaries_advisory=DURATION_BUCKETS)


# Asked on every request, so asked cheaply. The API's get_*_provider() looks in os.environ each
# time it finds no provider set (a microsecond, twice a request); a provider is set once per
# process, so these read the API's module global first, and remember a yes for good.
_tracing = _measuring = False
_ENVIRON_NAMES = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
_from_environment = any(name in os.environ for name in _ENVIRON_NAMES)


def tracing() -> bool:
    """Whether the project configured a tracer provider (an SDK's), so spans are worth making."""
    global _tracing
    if _tracing:
        return True
    if not _from_environment and getattr(trace, "_TRACER_PROVIDER", False) is None:
        return False  # none set: the question get_tracer_provider() would answer with the proxy
    _tracing = not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
    return _tracing


def measuring() -> bool:
    """Whether the project configured a meter provider, so the histograms record."""
    global _measuring
    if _measuring:
        return True
    if not _from_environment and getattr(metrics_api, "_METER_PROVIDER", False) is None:
        return False
    _measuring = not isinstance(metrics.get_meter_provider(), (ProxyMeterProvider, metrics.NoOpMeterProvider))
    return _measuring
