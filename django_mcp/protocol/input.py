"""
Asking the client for input — elicitation, sampling, roots — the same way in both eras.

Legacy era: the server sends real JSON-RPC requests on the request's stream and waits for the
client's answers. Modern era (2026-07-28, MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322):
server-initiated requests are forbidden, so a missing answer raises :class:`InputRequired`; the
dispatcher turns it into an ``InputRequiredResult`` whose signed ``requestState`` carries the
answers gathered so far, and the client's retry re-runs the handler with every answer available.
Handlers therefore call these functions in a deterministic order and get the same keys each round.
"""

import asyncio
from typing import Any

import mcp_types
from pydantic import BaseModel, ValidationError

from .context import RequestContext
from .errors import INTERNAL_ERROR, InvalidParams, McpError, MissingClientCapability, echo_text


ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
LIST_ROOTS = "roots/list"

CAPABILITY_FOR_METHOD = {ELICIT: "elicitation", SAMPLE: "sampling", LIST_ROOTS: "roots"}
RESULT_MODEL_FOR_METHOD: dict[str, type[BaseModel]] = {
    ELICIT: mcp_types.ElicitResult,
    SAMPLE: mcp_types.CreateMessageResult,
    LIST_ROOTS: mcp_types.ListRootsResult,
}
# Methods whose results may be InputRequiredResult (MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322: MUST NOT for any
# other).
INPUT_CAPABLE_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


class ClientRequestError(McpError):
    """
    A legacy client answered the server's request with an error, or not in time: the request that
    asked cannot finish, and gets a JSON-RPC error that says why (a tool's, a prompt's or a
    resource's alike) instead of the catch-all for unexpected exceptions.
    """

    code = INTERNAL_ERROR
    default_message = "The client did not answer the server's request"
    #: The JSON-RPC error code the client answered with, if it did.
    client_code: int | None = None
    #: True when the client did not answer in time.
    timed_out = False


async def wait_for_client_answer(future: "asyncio.Future[dict[str, Any]]", method: str, timeout: float
                                 ) -> dict[str, Any]:
    """The ``result`` of a legacy client's answer to our request; raises :class:`ClientRequestError`."""
    try:
        answer = await asyncio.wait_for(future, timeout)
    except asyncio.TimeoutError:
        late = ClientRequestError(f"The client did not answer {method} in time")
        late.timed_out = True
        raise late from None
    if "error" in answer:
        error = answer["error"] if isinstance(answer["error"], dict) else {}
        refused = ClientRequestError(f"The client refused {method}: {echo_text(error.get('message', 'error'))}")
        refused.client_code = error.get("code") if isinstance(error.get("code"), int) else None
        raise refused
    return answer.get("result") or {}


class InputRequired(Exception):
    """Raised inside a modern-era handler that needs answers the client has not given yet."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        self.requests = requests
        super().__init__(f"input required: {', '.join(requests)}")


def required_capability(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The client capability an input request needs, as a ``requiredCapabilities`` object."""
    name = CAPABILITY_FOR_METHOD.get(method)
    if name is None:
        raise McpError(f"Cannot ask the client for {method!r}")
    if method == ELICIT and (params or {}).get("mode") == "url":
        return {"elicitation": {"url": {}}}
    return {name: {}}


def client_has(ctx: RequestContext, needed: dict[str, Any]) -> bool:
    """Whether the client declared ``needed`` (``elicitation: {}`` means form mode only)."""
    for name, sub in needed.items():
        declared = ctx.client_capabilities.get(name)
        if declared is None:
            return False
        if name == "elicitation" and "url" in sub and not (isinstance(declared, dict) and "url" in declared):
            return False
    return True


def _parse_answer(method: str, key: str, raw: Any) -> BaseModel:
    try:
        return RESULT_MODEL_FOR_METHOD[method].model_validate(raw)
    except ValidationError as exc:
        raise InvalidParams(f"Malformed input response for {key!r}: {exc.errors()[0]['msg']}",
                            {"key": key}) from None


async def request_input(ctx: RequestContext, requests: dict[str, dict[str, Any]]) -> dict[str, BaseModel]:
    """
    Ask the client for several inputs at once, keyed by names unique within the request, and
    return each answer parsed into its ``mcp_types`` result model.

    Raises :class:`MissingClientCapability` when the client did not declare what a request needs
    (MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322: never put an undeclared request type in ``inputRequests``).
    """
    for key, spec in requests.items():
        needed = required_capability(spec["method"], spec.get("params"))
        if not client_has(ctx, needed):
            raise MissingClientCapability(needed)
    if ctx.is_modern or ctx.rerun_for_input:
        answers: dict[str, BaseModel] = {}
        missing: dict[str, dict[str, Any]] = {}
        for key, spec in requests.items():
            if key in ctx.input_answers:
                answers[key] = _parse_answer(spec["method"], key, ctx.input_answers[key])
            else:
                missing[key] = {"method": spec["method"], "params": spec.get("params") or {}}
        if missing:
            raise InputRequired(missing)
        return answers
    if ctx.send_request is None:
        # An endpoint that sends one answer per request (the plain view under WSGI) has no way to
        # put a question to a legacy client; a 2026-07-28 client is asked in the answer itself.
        raise McpError(f"This endpoint cannot ask a {ctx.protocol_version} client for input: it sends one answer "
                       "per request (clients of 2026-07-28 are asked through multi-round-trip results)")
    send = ctx.send_request
    results = await asyncio.gather(*(send(spec["method"], spec.get("params")) for spec in requests.values()))
    return {
        key: _parse_answer(spec["method"], key, result)
        for (key, spec), result in zip(requests.items(), results, strict=True)
    }
