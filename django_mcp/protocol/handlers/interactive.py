"""
Multi-round-trip requests (2026-07-28, SEP-2322, MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322) for ``tools/call``,
``prompts/get`` and ``resources/read``.

The handler runs with every answer known so far. If it asks for more, the answers gathered so far
travel in a signed ``requestState`` bound to the user, the method and the request's salient params;
the client's retry carries them back with the new ``inputResponses``.
"""

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from ..context import RequestContext
from ..errors import InvalidParams
from ..input import InputRequired
from .host import HandlerHost


def request_digest(method: str, binding: dict[str, Any]) -> str:
    """A digest of the request a state belongs to, so it cannot be replayed onto another one."""
    raw = json.dumps([method, binding], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def _wire(value: Any) -> Any:
    """An answer as JSON data (params arrive parsed into models; the state must be JSON)."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return value


async def run_interactive(dispatcher: HandlerHost, ctx: RequestContext, params: Any, *, binding: dict[str, Any],
                          run: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Run ``run()``; in the modern era, turn :class:`InputRequired` into an ``InputRequiredResult``."""
    if not ctx.is_modern:
        return await run()
    answers: dict[str, Any] = {}
    state_token = getattr(params, "request_state", None)
    responses = getattr(params, "input_responses", None)
    if state_token is not None:
        state = dispatcher.state_codec.decode(state_token, ctx)
        if state.get("d") != request_digest(ctx.method or "", binding):
            raise InvalidParams("requestState belongs to a different request")
        answers.update(state.get("a") or {})
        # Only answers to what we asked count; unknown keys are ignored (MCP spec 2026-07-28, basic/patterns/mrtr,
        # SEP-2322).
        pending = set(state.get("p") or ())
        answers.update({key: _wire(value) for key, value in (responses or {}).items() if key in pending})
    elif responses:
        # A retry without state carries answers only; each is still validated when the handler
        # asks for it, and an unknown key is never asked for, so it is ignored.
        answers.update({key: _wire(value) for key, value in responses.items()})
    ctx.input_answers = answers
    try:
        return await run()
    except InputRequired as needed:
        # Computed only here and for a retry: most calls carry no state and ask for nothing.
        state = {"a": answers, "p": sorted(needed.requests), "d": request_digest(ctx.method or "", binding)}
        return {
            "resultType": "input_required",
            "inputRequests": needed.requests,
            "requestState": dispatcher.state_codec.encode(state, ctx),
        }
