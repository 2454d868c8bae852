"""
An OTLP/HTTP receiver for the live tests: what a collector (Jaeger, Tempo, the OpenTelemetry
Collector) receives from a project exporting with ``opentelemetry-exporter-otlp-proto-http``,
decoded with ``opentelemetry-proto`` into plain records the tests can query.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


@dataclass
class Span:
    """One exported span, ids as lower-case hex as W3C ``traceparent`` writes them."""

    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    links: list[tuple[str, str]]
    service: str
    status_code: int
    events: list[str] = field(default_factory=list)


class OtlpReceiver:
    """Listens on 127.0.0.1; :attr:`endpoint` is what ``OTEL_EXPORTER_OTLP_ENDPOINT`` names."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.metrics: list[tuple[str, str, list[dict[str, Any]]]] = []  # (service, name, attributes of points)
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    receiver.take_traces(body)
                elif self.path == "/v1/metrics":
                    receiver.take_metrics(body)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def take_traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        found = []
        for resource_spans in request.resource_spans:
            resource = {item.key: _value(item.value) for item in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(Span(
                        name=span.name, kind=KINDS.get(span.kind, str(span.kind)), trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(), parent_span_id=span.parent_span_id.hex(),
                        attributes={item.key: _value(item.value) for item in span.attributes},
                        links=[(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
                        service=str(resource.get("service.name", "")), status_code=span.status.code,
                        events=[event.name for event in span.events]))
        with self.lock:
            self.spans.extend(found)

    def take_metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        with self.lock:
            for resource_metrics in request.resource_metrics:
                resource = {item.key: _value(item.value) for item in resource_metrics.resource.attributes}
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        points = [{item.key: _value(item.value) for item in point.attributes}
                                  for point in metric.histogram.data_points]
                        self.metrics.append((str(resource.get("service.name", "")), metric.name, points))

    def tree(self, trace_id: str) -> str:
        """The spans of one trace as an indented tree, for a reader (and the how-to's picture)."""
        with self.lock:
            spans = [span for span in self.spans if span.trace_id == trace_id]
        ids = {span.span_id for span in spans}
        lines: list[str] = []

        def add(span: Span, depth: int) -> None:
            lines.append(f"{'  ' * depth}{span.name}  [{span.kind}, {span.service}]")
            for child in spans:
                if child.parent_span_id == span.span_id:
                    add(child, depth + 1)

        for root in spans:
            if root.parent_span_id not in ids:
                add(root, 0)
        return "\n".join(lines)

    def wait_for(self, predicate: Callable[[list[Span]], Any], timeout: float = 20.0) -> Any:
        """The first truthy ``predicate(spans)`` within ``timeout`` seconds (the exporter batches)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                spans = list(self.spans)
            found = predicate(spans)
            if found:
                return found
            if time.monotonic() > deadline:
                names = sorted({(span.service, span.name) for span in spans})
                raise AssertionError(f"not received in {timeout} s; spans so far: {names}")
            time.sleep(0.1)
