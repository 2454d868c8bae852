"""
OpenTelemetry traces and metrics of every MCP request: the feature app ``django_mcp.tracing``
(``pip install "django-mcpkit[tracing]"``, which brings only ``opentelemetry-api``: the project
chooses its SDK and exporter, as it does for the rest of its traces).

It follows the OpenTelemetry semantic conventions for MCP (Status: Development,
https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/, text of
open-telemetry/semantic-conventions-genai ``docs/gen-ai/mcp.md``):

- a ``SERVER`` span for every request and notification the server handles, on every transport
  and revision, named ``{mcp.method.name} {target}`` (the tool or prompt name), with
  ``mcp.method.name``, ``mcp.session.id``, ``mcp.protocol.version``, ``mcp.resource.uri``,
  ``jsonrpc.request.id``, ``gen_ai.tool.name``, ``gen_ai.prompt.name``, ``network.transport``
  and, when it fails, ``error.type`` and ``rpc.response.status_code``;
- its parent is the trace context in ``params._meta`` (``traceparent``, ``tracestate``,
  ``baggage``: MCP spec 2026-07-28, basic#meta, SEP-414) with a link to the HTTP request's context;
  without one, the HTTP request's (an instrumented proxy's ``traceparent`` header, or a span an
  ASGI instrumentation opened);
- a ``CLIENT`` span for each request the server sends the client (elicitation, sampling, roots),
  its context injected into that request's ``_meta``;
- the histograms ``mcp.server.operation.duration``, ``mcp.client.operation.duration`` and
  ``mcp.server.session.duration``, beside (not instead of) the Prometheus metrics of
  ``django_mcp.metrics``.

It is a hook (:mod:`django_mcp.hooks`, the ``request``, ``notification`` and ``ask`` points) and
a receiver of the core's signals: with no tracer and meter provider configured it steps aside at
the first question, and a project without the app pays nothing.
"""
