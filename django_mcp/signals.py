"""
Signals django_mcp sends, for apps that only need to observe (the call log is one). Receivers run
on the event loop in the request's task, so they must be quick and must not block: queue the work
and do it elsewhere, as the call log does.
"""

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
