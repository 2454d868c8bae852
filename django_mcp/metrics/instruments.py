"""
The metrics themselves, in ``prometheus_client``'s default registry (so a project's own metrics,
and the process collector's CPU and memory figures, come out at the same endpoint). Made once per
process, at import.

Requests and tool calls, counted on every call, are kept in plain Python objects
(:class:`Timings`) and turned into Prometheus families only when the endpoint is scraped:
``prometheus_client``'s counter and histogram take a lock per update, which made them most of what
a request paid for its metrics. Their receivers run on the event loop, one at a time, so they need
none. Rare events (sessions, refusals, failures) use ``prometheus_client``'s own counters.
"""

from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from ..transports.session_cache import session_cache
from ..transports.stream_counts import open_stream_counts


# Seconds: a ping takes a millisecond, a tool call may take a minute.
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Timings:
    """How many of one kind of event there were, their total duration and a histogram of it."""

    __slots__ = ("count", "total", "buckets")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        # One slot per bound, and one for what is above the last (+Inf).
        self.buckets = [0] * (len(DURATION_BUCKETS) + 1)

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        self.buckets[bisect_left(DURATION_BUCKETS, seconds)] += 1


#: (method, era, transport, outcome, code) → the requests so answered.
REQUEST_TIMINGS: dict[tuple[str, str, str, str, str], Timings] = {}
#: (tool, outcome) → the calls of that tool so ended.
TOOL_TIMINGS: dict[tuple[str, str], Timings] = {}

SESSIONS_STARTED = Counter("mcp_sessions_started", "Legacy sessions started on this worker.", ["transport"])
SESSIONS_ENDED = Counter("mcp_sessions_ended", "Legacy sessions ended on purpose (DELETE, stream closed, staff).")
REFUSED = Counter("mcp_refused_requests", "HTTP requests refused before the dispatcher, by status.",
                  ["status", "transport"])
AUTHENTICATION_FAILURES = Counter("mcp_authentication_failures", "Refused or missing credentials.",
                                  ["transport", "reason"])
CHANNEL_LAYER_ERRORS = Counter("mcp_channel_layer_errors", "Channel-layer operations that failed after their retries.",
                               ["operation"])


def _histogram(name: str, documentation: str, labels: list[str],
               groups: dict[tuple[str, ...], list[Timings]]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, documentation, labels=labels)
    for label_values, timings in sorted(groups.items()):
        cumulative, running = [], 0
        for index, bound in enumerate((*DURATION_BUCKETS, float("inf"))):
            running += sum(timing.buckets[index] for timing in timings)
            cumulative.append(("+Inf" if bound == float("inf") else repr(bound), running))
        family.add_metric(list(label_values), cumulative, sum(timing.total for timing in timings))
    return family


class LiveStateCollector:
    """Everything read from the worker's own state when scraped: timings, open streams, cached sessions."""

    def collect(self) -> Iterator[Any]:
        # Copies: a scrape renders while requests may still add label sets.
        requests, tools = dict(REQUEST_TIMINGS), dict(TOOL_TIMINGS)
        answered = CounterMetricFamily(
            "mcp_requests", "MCP requests answered, by JSON-RPC method, era, transport, outcome and error code.",
            labels=["method", "era", "transport", "outcome", "code"])
        by_method: dict[tuple[str, ...], list[Timings]] = {}
        for key, timings in sorted(requests.items()):
            answered.add_metric(list(key), timings.count)
            by_method.setdefault(key[:2], []).append(timings)
        yield answered
        yield _histogram("mcp_request_duration_seconds", "Time from a request reaching the dispatcher to its answer.",
                         ["method", "era"], by_method)
        calls = CounterMetricFamily("mcp_tool_calls", "Tool calls that reached a tool, by tool and outcome.",
                                    labels=["tool", "outcome"])
        by_tool: dict[tuple[str, ...], list[Timings]] = {}
        for key, timings in sorted(tools.items()):
            calls.add_metric(list(key), timings.count)
            by_tool.setdefault(key[:1], []).append(timings)
        yield calls
        yield _histogram("mcp_tool_call_duration_seconds", "Time a tool call took, its hooks included.", ["tool"],
                         by_tool)
        streams = GaugeMetricFamily("mcp_open_streams", "Long-lived streams open on this worker, by kind.",
                                    labels=["kind"])
        for kind, count in sorted(open_stream_counts().items()):
            streams.add_metric([kind], count)
        yield streams
        yield GaugeMetricFamily("mcp_cached_sessions", "Legacy sessions this worker holds in its session cache.",
                                value=len(session_cache.entries))

    def describe(self) -> list[Any]:
        return []  # collected on every scrape; nothing to check at registration


LIVE_STATE = LiveStateCollector()
REGISTRY.register(LIVE_STATE)
