"""
The OpenTelemetry SDK, configured once per test process as a project would in its settings or
ASGI module: an in-memory span exporter that keeps spans only while a test records them, and an
in-memory metric reader. Set once because OpenTelemetry lets a process set its providers once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from django_mcp import hooks


class SpanRecorder(InMemorySpanExporter):
    """Keeps the spans ended while :attr:`recording`; the rest of the process's tests make spans too."""

    recording = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self.recording:
            return SpanExportResult.SUCCESS
        return super().export(spans)

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.get_finished_spans() if span.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, (name, [span.name for span in self.get_finished_spans()])
        return found[0]


_configured: dict[str, Any] = {}


def configure_sdk() -> dict[str, Any]:
    if not _configured:
        recorder = SpanRecorder()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(recorder))
        trace.set_tracer_provider(provider)
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _configured.update(recorder=recorder, reader=reader)
        # The sites would notice within a second (the tracing hook wakes up); at once, for the test.
        hooks.generation += 1
    return _configured


@pytest.fixture
def spans() -> Iterator[SpanRecorder]:
    recorder: SpanRecorder = configure_sdk()["recorder"]
    recorder.clear()
    recorder.recording = True
    yield recorder
    recorder.recording = False
    recorder.clear()


@pytest.fixture
def metric_points() -> Any:
    """A function returning the data points of an instrument by name, as the reader collects them now."""
    reader: InMemoryMetricReader = configure_sdk()["reader"]

    def points(name: str) -> list[Any]:
        data = reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)
        return found

    return points
