"""
OpenTelemetry for the example project, configured once per process the way a project does it in
its ``asgi.py``/``wsgi.py`` (docs/howto/tracing.md): ``django_mcp.tracing`` then gives every MCP
request a span, with the ORM's SQLite queries inside it.

- ``OTEL_EXPORTER_OTLP_ENDPOINT`` set (a local Jaeger or OpenTelemetry Collector): spans and
  metrics go there over OTLP/HTTP, the service named by ``OTEL_SERVICE_NAME`` (``library``);
- else ``DEMO_TRACES`` names a file (``scripts/demo`` sets ``.tmp/demo-traces.jsonl``): each span
  is written there as one JSON line, nothing else to run;
- else nothing is configured, and the app steps aside.

The OpenTelemetry SDK and exporter are the project's own choice, not django_mcp's dependencies:
without them installed, nothing is configured either.
"""

from __future__ import annotations

import os


def configure_tracing() -> None:
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        return
    endpoint, traces_file = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"), os.environ.get("DEMO_TRACES")
    if not endpoint and not traces_file:
        return
    os.environ.setdefault("OTEL_SERVICE_NAME", "library")
    resource = Resource.create()
    provider = TracerProvider(resource=resource)
    if endpoint:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[
            PeriodicExportingMetricReader(OTLPMetricExporter())]))
    else:
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        # The SDK's console exporter, into the file, one compact JSON line per span.
        out = open(traces_file, "a", encoding="utf-8")  # noqa: SIM115 - open as long as the process
        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter(
            out=out, formatter=lambda span: span.to_json(indent=None) + "\n")))
    trace.set_tracer_provider(provider)
    SQLite3Instrumentor().instrument()
