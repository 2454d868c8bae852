"""
The metrics themselves, in ``prometheus_client``'s default registry (so a project's own metrics,
and the process collector's CPU and memory figures, come out at the same endpoint). Made once per
process, at import.
"""

from typing import Any

from prometheus_client import REGISTRY, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from ..transports.session_cache import session_cache
from ..transports.stream_counts import open_stream_counts


# Seconds: a ping takes a millisecond, a tool call may take a minute.
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

REQUESTS = Counter(
    "mcp_requests", "MCP requests answered, by JSON-RPC method, era, transport, outcome and error code.",
    ["method", "era", "transport", "outcome", "code"])
REQUEST_DURATION = Histogram(
    "mcp_request_duration_seconds", "Time from a request reaching the dispatcher to its answer.",
    ["method", "era"], buckets=DURATION_BUCKETS)
TOOL_CALLS = Counter("mcp_tool_calls", "Tool calls that reached a tool, by tool and outcome.", ["tool", "outcome"])
TOOL_CALL_DURATION = Histogram(
    "mcp_tool_call_duration_seconds", "Time a tool call took, its hooks included.", ["tool"],
    buckets=DURATION_BUCKETS)
SESSIONS_STARTED = Counter("mcp_sessions_started", "Legacy sessions started on this worker.", ["transport"])
SESSIONS_ENDED = Counter("mcp_sessions_ended", "Legacy sessions ended on purpose (DELETE, stream closed, staff).")
REFUSED = Counter("mcp_refused_requests", "HTTP requests refused before the dispatcher, by status.",
                  ["status", "transport"])
AUTHENTICATION_FAILURES = Counter("mcp_authentication_failures", "Refused or missing credentials.",
                                  ["transport", "reason"])
CHANNEL_LAYER_ERRORS = Counter("mcp_channel_layer_errors", "Channel-layer operations that failed after their retries.",
                               ["operation"])


class LiveStateCollector:
    """Gauges read from the worker's own state when scraped: open streams and cached sessions."""

    def collect(self) -> Any:
        streams = GaugeMetricFamily("mcp_open_streams", "Long-lived streams open on this worker, by kind.",
                                    labels=["kind"])
        for kind, count in sorted(open_stream_counts().items()):
            streams.add_metric([kind], count)
        yield streams
        yield GaugeMetricFamily("mcp_cached_sessions", "Legacy sessions this worker holds in its session cache.",
                                value=len(session_cache.entries))

    def describe(self) -> Any:
        return []  # collected on every scrape; nothing to check at registration


LIVE_STATE = LiveStateCollector()
REGISTRY.register(LIVE_STATE)
