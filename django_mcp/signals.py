"""
Signals django_mcp sends, for apps that only need to observe (the call log is one). Receivers run
on the event loop in the request's task, so they must be quick and must not block: queue the work
and do it elsewhere, as the call log does.
"""

from typing import Any

from django.dispatch import Signal


#: Sent after every ``tools/call`` that reached a tool (or a hook that answered it), with
#: ``sender`` the site and the keyword arguments ``call`` (a :class:`~django_mcp.hooks.ToolCall`),
#: ``outcome`` (``"ok"``, ``"tool_error"``, ``"protocol_error"``, ``"cancelled"``, or the
#: outcome a hook set, e.g. ``"rate_limited"``), ``message`` (the error's text, blank when ok)
#: and ``duration_ms``. Not sent for a 2026-07-28 call that asked the client for input: it comes
#: again with the answers, and is sent then.
tool_called = Signal(use_caching=True)  # sent on every call: each site's receivers looked up once

#: Sent by ``manage.py mcp_clearsessions`` after it removed expired sessions and stream events,
#: with ``sender`` the command's class. A receiver removes what its app keeps too long and returns
#: a sentence for the command's output (``"12 old tool calls"``), or None.
clearing_expired = Signal()

#: Sent after every JSON-RPC request a transport served (any revision, any transport), with
#: ``sender`` the site and the keyword arguments ``ctx`` (the
#: :class:`~django_mcp.protocol.context.RequestContext`), ``message`` (the request), ``outcome``
#: (see :func:`django_mcp.request_log.outcome_of`), ``error_code`` (the JSON-RPC error code, or
#: None) and ``duration_ms``. Sent only while it has receivers or the request log is on, so a
#: project that observes nothing pays one test per request.
request_served = Signal(use_caching=True)

#: Sent when an HTTP request is refused before it reaches the dispatcher (a foreign Host, a
#: malformed body, an unknown session, a refused credential, a body over the size limit…), with
#: ``sender`` the consumer's class and the keyword arguments ``status`` (the HTTP status),
#: ``error_code`` (the JSON-RPC code in the body) and ``transport``.
request_refused = Signal()

#: Sent when a presented credential is refused, or a request without one meets
#: ``REQUIRE_AUTHENTICATION``, with ``sender`` the consumer's class and the keyword arguments
#: ``transport`` and ``reason`` (``"not_authenticated"`` or ``"invalid_credential"``). The
#: credential itself is never passed on.
authentication_failed = Signal()

#: Sent when a legacy session starts over HTTP (``initialize``, or an HTTP+SSE stream opening),
#: with ``sender`` None and the keyword arguments ``transport`` and ``protocol_version``.
session_started = Signal()

#: Sent when a legacy session is ended on purpose — the client's ``DELETE``, an HTTP+SSE stream
#: closing, staff deleting it — with ``sender`` None and the keyword arguments ``session_id``,
#: ``started_at`` (when it began, seconds since the epoch, or None where unknown),
#: ``protocol_version`` and ``transport`` (None when staff ended it by its row alone). Sessions
#: that expire unused are removed by ``mcp_clearsessions`` without it.
session_ended = Signal()

#: Sent when a channel-layer operation failed for good (after its retries), with ``sender`` None
#: and the keyword arguments ``operation`` (``"group_send"``, ``"receive"``…) and ``exception``.
channel_layer_failed = Signal()

#: Sent, with ``asend`` so that async receivers are awaited, when what the apps keep off the
#: request path must be written now, with ``sender`` None: the test client (:mod:`django_mcp.test`)
#: sends it after each exchange, so a test sees the call log's rows as soon as its call returns.
#: A receiver writes what it queued (the call log's entries) and returns nothing.
flush_requested = Signal()


def tell(signal: Signal, sender: Any = None, **kwargs: Any) -> None:
    """
    Send ``signal`` to its receivers, if it has any, without letting a failing receiver reach the
    caller (``send_robust``, which logs the failure): for the signals above that only observe.
    """
    if signal.receivers:
        signal.send_robust(sender=sender, **kwargs)
