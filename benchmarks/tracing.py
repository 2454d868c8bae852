"""
What a traced MCP request costs, taken apart in process: the tracing app's hook around a request
(``django_mcp.tracing.spans.TracingHook``) with nothing configured, then with the OpenTelemetry
SDK — a batch span processor exporting over OTLP/HTTP to a sink in this process, and a metric
reader — against the SDK's own floor in the same run: a bare span with the same attributes,
exported the same way, and one histogram record.

CPU time per operation (``time.process_time``, every thread of the process: the batch
processor's export thread included, flushed before the clock stops), the median of five rounds:

    .venv/bin/python benchmarks/tracing.py                # ~20 s
    .venv/bin/python benchmarks/tracing.py --operations 5000

``benchmarks/instructions.py --modes tracing,tracing-sdk`` measures the same on the servers
(instructions per request under callgrind); this says where the time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks`, `tests` and `django_mcp` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()


async def _answer(operation: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


def _operation() -> Any:
    from django_mcp.hooks import McpRequest
    from django_mcp.protocol.context import RequestContext
    from django_mcp.protocol.versions import Era

    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
    ctx = RequestContext(era=Era.MODERN, protocol_version="2026-07-28", request_id=7, method="tools/call",
                         http_headers={b"host": "127.0.0.1:8000"})
    return McpRequest(None, message, ctx, _answer)


def _per_operation(run: Any, operations: int, flush: Any = None, rounds: int = 5) -> float:
    """Median CPU microseconds per operation of ``run(operations)`` (``flush`` inside the clock)."""
    results = []
    for _ in range(rounds):
        started = time.process_time()
        run(operations)
        if flush is not None:
            flush()
        results.append((time.process_time() - started) / operations * 1e6)
    return statistics.median(results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--operations", type=int, default=20000, help="operations per round (default 20000)")
    args = parser.parse_args()
    _setup_django()
    from benchmarks.instructions import OtlpSink
    from django_mcp.tracing import instruments
    from django_mcp.tracing.spans import tracing_hook

    operation = _operation()
    loop = asyncio.new_event_loop()

    def through_hook(count: int) -> None:
        async def many() -> None:
            for _ in range(count):
                await tracing_hook.request(operation, _answer)

        loop.run_until_complete(many())

    def direct(count: int) -> None:
        async def many() -> None:
            for _ in range(count):
                await _answer(operation)

        loop.run_until_complete(many())

    rows = [("the call itself, no hook", _per_operation(direct, args.operations)),
            ("the hook, no SDK configured", _per_operation(through_hook, args.operations))]

    from opentelemetry import metrics, trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import SpanKind

    sink = OtlpSink()
    provider = TracerProvider()
    # A queue as long as a round: the default (2048) would drop spans, and their export with them.
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{sink.endpoint}/v1/traces"),
                                                   max_queue_size=args.operations + 1))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    assert instruments.tracing() and instruments.measuring()

    def flush() -> None:
        provider.force_flush()

    attributes = {"mcp.method.name": "tools/call", "mcp.protocol.version": "2026-07-28", "gen_ai.tool.name": "echo",
                  "gen_ai.operation.name": "execute_tool", "network.transport": "tcp", "network.protocol.name": "http",
                  "jsonrpc.request.id": "7"}
    tracer = trace.get_tracer("benchmark")
    histogram = metrics.get_meter("benchmark").create_histogram("benchmark.duration", unit="s")

    def bare_span(count: int) -> None:
        for _ in range(count):
            tracer.start_span("tools/call echo", kind=SpanKind.SERVER, attributes=attributes).end()

    def bare_record(count: int) -> None:
        kept = {key: value for key, value in attributes.items() if key != "jsonrpc.request.id"}
        for _ in range(count):
            histogram.record(0.001, kept)

    rows += [("SDK floor: a bare span, batch-exported over OTLP/HTTP", _per_operation(bare_span, args.operations, flush)),
             ("SDK floor: one histogram record", _per_operation(bare_record, args.operations)),
             ("the hook with the SDK: span, export, histogram", _per_operation(through_hook, args.operations, flush))]
    sink.server.shutdown()
    loop.close()

    print(f"CPU per operation, median of 5 rounds of {args.operations} (every thread, export flushed)")
    for name, micros in rows:
        print(f"  {name:58} {micros:8.2f} µs")
    floor = rows[2][1] + rows[3][1]
    print(f"\n  the hook with the SDK / the SDK's own span and record: {rows[4][1] / floor:.2f}x")
    print(f"  the hook without an SDK, over the call itself: +{rows[1][1] - rows[0][1]:.2f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
