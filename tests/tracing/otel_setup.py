"""
The OpenTelemetry SDK configured as a project configures it, for the live servers of these tests:
spans and metrics exported over OTLP/HTTP to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the receiver a test
runs), the service named by ``OTEL_SERVICE_NAME``, and the database drivers instrumented so the
ORM's queries appear inside the MCP spans.
"""

from opentelemetry import metrics, trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def configure() -> None:
    resource = Resource.create()  # service.name from OTEL_SERVICE_NAME
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(), schedule_delay_millis=200))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[
        PeriodicExportingMetricReader(OTLPMetricExporter(), export_interval_millis=500)]))
    SQLite3Instrumentor().instrument()
    PsycopgInstrumentor().instrument(enable_commenter=False)
