"""
The spans themselves, from one hook (:mod:`django_mcp.hooks`):

- around every request and notification the server handles, a ``SERVER`` span, current while the
  method runs, so what the method does (the ORM's queries, when the project instruments its
  database driver) nests inside;
- around every request the server sends its client, and every change notification it publishes,
  a ``CLIENT`` span whose context travels in that message's ``_meta`` — through the channel layer
  to the worker that delivers a notification, which records a ``CONSUMER`` span in the same trace;
- around work deferred to a durable task, the context kept with the task, and its run a
  ``CONSUMER`` span of its own trace linked back to the call that made it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import Link, SpanKind, StatusCode

from ..hooks import (CallNext, ClientQuestion, Deferral, DeferredRun, Delivery, Hook, McpNotification, McpRequest,
                     Publication)
from ..protocol.context import RequestContext
from ..protocol.errors import INTERNAL_ERROR, McpError
from . import instruments, propagation
from .attributes import (argument_attributes, error_attributes, metric_attributes, notification_attributes,
                         operation_attributes, span_attributes, span_name, target_of)


def parentage(params: Any, ctx: RequestContext) -> tuple[context.Context | None, list[Link]]:
    """
    The parent of a server span, and its links: the context in ``params._meta`` when the client
    sent one, linked to the transport's (the span an ASGI instrumentation opened, or the HTTP
    request's ``traceparent``); else the transport's context itself (the conventions, "Context
    propagation": "use context extracted from MCP ``params._meta`` as a parent for MCP server span
    and SHOULD link current ambient context, if it's present").
    """
    transport = propagation.ambient() or propagation.from_headers(ctx.http_headers)
    sent = propagation.from_meta(params)
    if sent is None:
        return transport, []
    if transport is None:
        return sent, []
    return sent, [Link(trace.get_current_span(transport).get_span_context())]


class TracingHook(Hook):
    """Spans and duration metrics around every MCP operation (see :mod:`django_mcp.tracing`)."""

    def active(self) -> bool:
        """Once a tracer or meter provider is configured; until then the sites leave the hook out."""
        return instruments.tracing() or instruments.measuring()

    # The methods around every request are plain functions returning the awaitable: with nothing
    # configured they hand the operation on without a coroutine of their own.

    def request(self, request: McpRequest, call_next: CallNext) -> Awaitable[dict[str, Any]]:  # type: ignore[override]
        spans, histograms = instruments.tracing(), instruments.measuring()
        if not spans and not histograms:
            return call_next(request)
        return self.observe(request, call_next, spans, histograms, request.request.request_id)

    def notification(self, notification: McpNotification, call_next: CallNext) -> Awaitable[None]:  # type: ignore[override]
        spans, histograms = instruments.tracing(), instruments.measuring()
        if not spans and not histograms:
            return call_next(notification)
        return self.observe(notification, call_next, spans, histograms, None)

    async def observe(self, operation: McpRequest | McpNotification, call_next: CallNext, spans: bool,
                      histograms: bool, request_id: Any) -> Any:
        """``call_next(operation)`` inside a server span and/or timed for the operation metric."""
        ctx = operation.request
        attributes = span_attributes(operation.method, operation.params, ctx, request_id)
        span = token = None
        if spans:
            parent, links = parentage(operation.params, ctx)
            _, target = target_of(operation.method, operation.params)
            span = instruments.tracer.start_span(span_name(operation.method, target), context=parent,
                                                 kind=SpanKind.SERVER, attributes=attributes, links=links)
            recorded = argument_attributes(operation.method, operation.params)  # opt-in: the span's only
            if recorded:
                span.set_attributes(recorded)
            token = context.attach(trace.set_span_in_context(span, parent))
        started = time.perf_counter()
        outcome: dict[str, Any] = {}
        known_target = True
        try:
            result = await call_next(operation)
            if isinstance(result, dict) and result.get("isError") is True:
                # A tool that answered with an error: the call succeeded, the tool did not.
                outcome["error.type"] = "tool_error"
                if span is not None:
                    span.set_status(StatusCode.ERROR)
            return result
        except McpError as exc:
            found, failed = error_attributes(exc.code)
            outcome.update(found)
            known_target = exc.code != -32602  # an unknown tool or prompt must not become a metric series
            if span is not None and failed:
                span.set_status(StatusCode.ERROR, exc.message)
            raise
        except asyncio.CancelledError:
            raise  # the client withdrew the request: not the server's failure
        except Exception as exc:
            # The client receives an internal error (-32603); the exception itself is the span's event.
            outcome.update(error_attributes(INTERNAL_ERROR)[0])
            if span is not None:
                span.record_exception(exc)
                span.set_status(StatusCode.ERROR, type(exc).__qualname__)
            raise
        finally:
            if span is not None:
                if ctx.session is not None and "mcp.session.id" not in attributes:
                    outcome["mcp.session.id"] = str(ctx.session.id)  # the one initialize opened
                if outcome:
                    span.set_attributes(outcome)
                span.end()
                context.detach(token)  # type: ignore[arg-type]
            if histograms:
                outcome.pop("mcp.session.id", None)
                if ctx.protocol_version:
                    attributes["mcp.protocol.version"] = ctx.protocol_version  # initialize's, as negotiated
                instruments.server_operation_duration.record(
                    time.perf_counter() - started, {**metric_attributes(attributes, known_target), **outcome})

    def ask(self, question: ClientQuestion, call_next: CallNext) -> Awaitable[dict[str, Any]]:  # type: ignore[override]
        spans, histograms = instruments.tracing(), instruments.measuring()
        if not spans and not histograms:
            return call_next(question)
        return self.observe_question(question, call_next, spans, histograms)

    async def observe_question(self, question: ClientQuestion, call_next: CallNext, spans: bool,
                               histograms: bool) -> dict[str, Any]:
        """``call_next(question)`` inside a client span and/or timed for the client operation metric."""
        ctx = question.request
        # The peer of this span is the server of the request it sends: no client.* attributes.
        attributes = {key: value for key, value in span_attributes(question.method, question.params, ctx, None).items()
                      if not key.startswith("client.")}
        span = None
        if spans:
            span = instruments.tracer.start_span(question.method, kind=SpanKind.CLIENT, attributes=attributes)
            # The client continues the trace from the request's _meta (the conventions, "Context propagation").
            question.params = propagation.with_context_in_meta(question.params, trace.set_span_in_context(span))
        started = time.perf_counter()
        outcome: dict[str, Any] = {}
        try:
            return await call_next(question)  # type: ignore[no-any-return]
        except McpError as exc:
            code = getattr(exc, "client_code", None)
            if code is not None:
                # The client answered with an error: on the side that sent the request, every
                # JSON-RPC error code is an error (the conventions, mcp.client status).
                outcome.update({"rpc.response.status_code": str(code), "error.type": str(code)})
            else:
                outcome["error.type"] = "timeout" if getattr(exc, "timed_out", False) else type(exc).__qualname__
            if span is not None:
                span.set_status(StatusCode.ERROR, exc.message)
            raise
        finally:
            if span is not None:
                if outcome:
                    span.set_attributes(outcome)
                span.end()
            if histograms:
                instruments.client_operation_duration.record(time.perf_counter() - started,
                                                             {**metric_attributes(attributes, True), **outcome})

    async def publish(self, publication: Publication, call_next: CallNext) -> None:
        """
        A change notification the server sends: a ``CLIENT`` span (the conventions: reported "by
        the MCP server when server initiates the operation"), its context injected into the
        notification's ``params._meta``, which travels through the channel layer to whichever
        worker holds the streams, and on to the clients.
        """
        if not instruments.tracing():
            await call_next(publication)
            return
        message = publication.event.get("message")
        if not isinstance(message, dict):
            await call_next(publication)
            return
        method = str(message.get("method", ""))
        span = instruments.tracer.start_span(method, kind=SpanKind.CLIENT,
                                             attributes=notification_attributes(method, message.get("params")))
        try:
            publication.event = {**publication.event, "message": {
                **message, "params": propagation.with_context_in_meta(message.get("params"),
                                                                      trace.set_span_in_context(span))}}
            await call_next(publication)
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(StatusCode.ERROR, type(exc).__qualname__)
            span.set_attribute("error.type", type(exc).__qualname__)
            raise
        finally:
            span.end()

    async def deliver(self, delivery: Delivery, call_next: CallNext) -> None:
        """
        A change notification reaching this worker: a span in the trace of the request that caused
        it (its context came in the notification's ``_meta``), counting the streams it is handed to.
        """
        message = delivery.event.get("message")
        params = message.get("params") if isinstance(message, dict) else None
        carried = propagation.from_meta(params) if instruments.tracing() else None
        if carried is None:
            await call_next(delivery)  # nothing to continue: no trace of its own for every notification
            return
        method = str(message.get("method", ""))  # type: ignore[union-attr]
        attributes = {**notification_attributes(method, params), "django_mcp.streams": len(delivery.streams)}
        with instruments.tracer.start_as_current_span(f"deliver {method}", context=carried, kind=SpanKind.CONSUMER,
                                                      attributes=attributes):
            await call_next(delivery)

    async def defer(self, deferral: Deferral, call_next: CallNext) -> None:
        """Work left for later (a durable task) carries the current context: its run links back to it."""
        if instruments.tracing():
            propagate.inject(deferral.carrier)
        await call_next(deferral)

    async def run_deferred(self, run: DeferredRun, call_next: CallNext) -> None:
        """
        A durable task's run, in whichever process runs it: a span of its own trace — it may run
        long after the request, or again after a worker died — linked to the call that made it.
        """
        if not instruments.tracing():
            await call_next(run)
            return
        carried = propagation.from_meta({"_meta": run.carrier})
        links = [Link(trace.get_current_span(carried).get_span_context())] if carried is not None else []
        attributes = {**operation_attributes(run.method, {"name": run.target}, None), "django_mcp.task.id": run.key}
        with instruments.tracer.start_as_current_span(span_name(run.method, run.target), context=context.Context(),
                                                      kind=SpanKind.CONSUMER, attributes=attributes, links=links):
            await call_next(run)


#: The hook the app installs (``django_mcp.hooks.register_hook``); outermost when the app comes
#: first among the feature apps in ``INSTALLED_APPS``.
tracing_hook = TracingHook()
