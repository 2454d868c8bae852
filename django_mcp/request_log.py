"""
What happened to each MCP request, once it is answered: one line on the ``django_mcp.requests``
logger at INFO, and the :data:`~django_mcp.signals.request_served` signal for observers such as
the metrics app (:mod:`django_mcp.metrics`).

The line is ``key=value`` pairs (logfmt), the message's fields also on the record as the
attribute ``mcp`` (a dict) for JSON formatters::

    mcp_request method=tools/call target=search outcome=ok duration_ms=3.1 user=alice
    client="Claude Code/2.1" era=legacy version=2025-11-25 transport=streamable-http id=7

- ``method``: the JSON-RPC method; ``target``: the tool or prompt name, or the resource URI;
- ``outcome``: ``ok``, ``tool_error`` (the tool answered ``isError``), ``input_required`` (a
  2026-07-28 call that asked the client for more), ``cancelled``, or ``error`` with ``code`` the
  JSON-RPC error code;
- ``duration_ms``: from the request being handed to the dispatcher to its answer;
- ``user``: the Django username, ``-`` for an anonymous client; ``client``: the client's own
  ``clientInfo`` name and version (what it says of itself, not a credential);
- ``era``, ``version``, ``transport``: how the client spoke; ``id``: the JSON-RPC request id.

No token, session id or argument is logged; ``DJANGO_MCP["REQUEST_LOG_ARGUMENTS"] = True`` adds
``arguments=`` for ``tools/call`` and ``prompts/get``, redacted by ``REQUEST_LOG_REDACT``. Values a
client chose are quoted and escaped, so none can forge a second line. Nothing is built while the
logger is below INFO and the signal has no receivers: the default costs a request two tests.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from .conf import mcp_settings
from .protocol.context import RequestContext
from .redaction import redact, redacted_names
from .signals import request_served


logger = logging.getLogger("django_mcp.requests")

#: The longest target and client name logged, and the longest ``arguments=`` value.
MAX_VALUE_LENGTH = 200
MAX_ARGUMENTS_LENGTH = 1000

_TARGET_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                  "resources/subscribe": "uri", "resources/unsubscribe": "uri"}
_ARGUMENT_METHODS = frozenset({"tools/call", "prompts/get"})


def observing() -> bool:
    """Whether anyone wants to hear of requests: the request log is on, or the signal has receivers."""
    return bool(request_served.receivers) or logger.isEnabledFor(logging.INFO)


def started() -> float | None:
    """The time to measure a request from, or None when nobody observes requests."""
    return time.perf_counter() if observing() else None


def outcome_of(response: dict[str, Any] | None) -> tuple[str, int | None]:
    """
    ``(outcome, error code)`` of a response: ``"ok"``, ``"tool_error"``, ``"input_required"``,
    ``"error"`` with its JSON-RPC code, or ``"cancelled"`` when there is none.
    """
    if response is None:
        return "cancelled", None
    error = response.get("error")
    if error is not None:
        code = error.get("code")
        return "error", code if isinstance(code, int) else None
    result = response.get("result")
    if isinstance(result, dict):
        if result.get("isError") is True:
            return "tool_error", None
        if result.get("resultType") == "input_required":
            return "input_required", None
    return "ok", None


def target_of(message: dict[str, Any]) -> str | None:
    """The tool or prompt name, or the resource URI, a request is about."""
    key = _TARGET_PARAMS.get(message.get("method"))  # type: ignore[arg-type]
    params = message.get("params")
    if key is None or not isinstance(params, dict):
        return None
    value = params.get(key)
    return value if isinstance(value, str) else None


def user_of(ctx: RequestContext) -> str:
    """The Django username of the request's user, ``-`` when anonymous."""
    user = ctx.user
    if user is None or not getattr(user, "is_authenticated", False):
        return "-"
    return str(user.get_username())


def client_of(ctx: RequestContext) -> str | None:
    """``name/version`` from the client's ``clientInfo``, as it describes itself."""
    info = ctx.client_info
    if not isinstance(info, dict) or not info.get("name"):
        return None
    name = str(info["name"])
    return f"{name}/{info['version']}" if info.get("version") else name


def _quoted(value: Any, limit: int = MAX_VALUE_LENGTH) -> str:
    """A logfmt value: bare when it is plain, else a JSON string (escapes quotes and line breaks)."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    if text and text.isprintable() and not any(char in text for char in ' "=\\'):
        return text
    return json.dumps(text)


def fields_of(message: dict[str, Any], ctx: RequestContext, outcome: str, code: int | None,
              duration_ms: float) -> dict[str, Any]:
    """The request log's fields, in their order (module docstring)."""
    fields: dict[str, Any] = {"method": message.get("method"), "target": target_of(message), "outcome": outcome}
    if code is not None:
        fields["code"] = code
    fields["duration_ms"] = round(duration_ms, 1)
    fields["user"] = user_of(ctx)
    fields["client"] = client_of(ctx)
    fields["era"] = ctx.era.value
    fields["version"] = ctx.protocol_version
    fields["transport"] = ctx.transport
    fields["id"] = message.get("id")
    if mcp_settings.REQUEST_LOG_ARGUMENTS and message.get("method") in _ARGUMENT_METHODS:
        params = message.get("params")
        arguments = params.get("arguments") if isinstance(params, dict) else None
        if arguments is not None:
            fields["arguments"] = redact(arguments, redacted_names(mcp_settings.REQUEST_LOG_REDACT))
    return fields


def format_fields(fields: dict[str, Any]) -> str:
    """The log line's message: ``mcp_request`` and the fields that have a value, as logfmt."""
    parts = ["mcp_request"]
    for key, value in fields.items():
        if value is None:
            continue
        if key == "arguments":
            parts.append("arguments=" + _quoted(json.dumps(value, default=str), MAX_ARGUMENTS_LENGTH))
        else:
            parts.append(f"{key}={_quoted(value)}")
    return " ".join(parts)


def request_done(site: Any, message: dict[str, Any], ctx: RequestContext, response: dict[str, Any] | None,
                 since: float) -> None:
    """Log an answered request and tell the observers of :data:`request_served`; never raises."""
    duration_ms = (time.perf_counter() - since) * 1000
    outcome, code = outcome_of(response)
    try:
        if logger.isEnabledFor(logging.INFO):
            fields = fields_of(message, ctx, outcome, code, duration_ms)
            logger.info(format_fields(fields), extra={"mcp": fields})
        if request_served.receivers:
            request_served.send(sender=site, ctx=ctx, message=message, outcome=outcome, error_code=code,
                                duration_ms=duration_ms)
    except Exception:  # an observer or a formatter must never cost the client its answer
        logger.warning("Observing %s failed", message.get("method"), exc_info=True)
