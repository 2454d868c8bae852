"""
Hypothesis strategies for MCP traffic: JSON values, the 2026-07-28 ``_meta`` envelope, params
per method, and whole JSON-RPC messages of both eras (MCP spec 2026-07-28, basic#messages; MCP
spec 2025-11-25, basic/lifecycle).

Most of what they make is *near-valid*: a method from the specification, the name of a real tool,
the URI of a real resource or template, params of the right shape with one thing wrong now and
then. Plain garbage is refused at the JSON-RPC envelope and exercises little, so it is only one
branch among many.
"""

from functools import cache
from typing import Any

from hypothesis import strategies as st
from mcp_types.methods import (CLIENT_REQUESTS, SERVER_REQUESTS, SPEC_CLIENT_METHODS,
                                SPEC_CLIENT_NOTIFICATION_METHODS)

from django_mcp.protocol.context import LOG_LEVELS
from django_mcp.protocol.versions import ALL_VERSIONS, LEGACY_VERSIONS

from .site_names import PROMPTS, RESOURCES, TEMPLATE_VALUES, TEMPLATES, TOOL_ARGUMENTS, text_values

MODERN = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"

CLIENT_METHODS = tuple(sorted(SPEC_CLIENT_METHODS))
# The methods each era serves (MCP spec 2026-07-28, basic/versioning: initialize, ping,
# logging/setLevel and the legacy subscriptions are gone; server/discover and subscriptions/listen are new).
MODERN_METHODS = tuple(sorted({method for method, version in CLIENT_REQUESTS if version == "2026-07-28"}))
LEGACY_METHODS = tuple(sorted({method for method, version in CLIENT_REQUESTS if version != "2026-07-28"}
                              - {"initialize"}))
NOTIFICATION_METHODS = tuple(sorted(SPEC_CLIENT_NOTIFICATION_METHODS))
# Methods a client has no business sending, but might: the server's own requests, removed or
# unserved ones (tasks/*), and near misses of real names.
STRANGE_METHODS = tuple(sorted({method for method, _ in SERVER_REQUESTS})) + (
    "tasks/get", "tasks/list", "tools/List", "tools/call/", "", "rpc.discover", "notifications/message")
# The deepest nesting the fuzzer builds: what json.loads accepts from a body, with room to spare.
MAX_DEPTH = 950


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """
    One of ``choices``, each drawn in proportion to its weight. (``one_of`` cannot weight: it
    treats the same strategy given twice as one branch.)
    """
    indices = [index for index, (weight, _) in enumerate(choices) for _ in range(weight)]
    return st.sampled_from(indices).flatmap(lambda index: choices[index][1])


# JSON values ---------------------------------------------------------------------------------

@cache
def scalars() -> st.SearchStrategy[Any]:
    """
    JSON scalars; floats are finite (JSON has no NaN); integers include ones past 64 bits but none
    between a million and 2**40, where a value that lands in ``echo``'s ``times`` (see
    ``site_names``) makes a list the size of the machine's memory.
    """
    integers = st.one_of(st.integers(-(2**70), 10**6), st.integers(2**40, 2**70))
    return st.one_of(st.none(), st.booleans(), integers, st.floats(allow_nan=False, allow_infinity=False),
                     text_values())


@cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value, small; see :func:`deep_values` for deep ones."""
    keys = st.one_of(st.text(max_size=8), st.sampled_from(["name", "uri", "_meta", "arguments", "type", PV]))
    return st.recursive(scalars(), lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(keys, inner, max_size=4)),
                        max_leaves=max_leaves)


def nest(depth: int, kind: str) -> Any:
    """A list (or object) nested ``depth`` levels deep, built without recursion."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value] if kind == "list" else {"a": value}
    return value


@cache
def deep_values() -> st.SearchStrategy[Any]:
    """
    Lists and objects nested up to :data:`MAX_DEPTH` deep: what an echo must never repeat. The
    depths near the limit matter most (the encoder recurses once per level, on top of the stack
    it is called from), so they are drawn as often as all the others.
    """
    depths = st.one_of(st.integers(1, MAX_DEPTH), st.integers(MAX_DEPTH - 100, MAX_DEPTH))
    return st.builds(nest, depths, st.sampled_from(["list", "object"]))


@cache
def any_values() -> st.SearchStrategy[Any]:
    """Mostly small JSON values, sometimes a deep one."""
    return weighted((3, json_values()), (1, deep_values()))


# Names and references -------------------------------------------------------------------------

@cache
def tool_names() -> st.SearchStrategy[str]:
    return weighted((9, st.sampled_from(sorted(TOOL_ARGUMENTS))), (1, text_values()))


@cache
def template_uris() -> st.SearchStrategy[str]:
    """A template with each variable filled in by an ordinary value or an encoded path trick."""
    def fill(template: str, values: list[str]) -> str:
        for variable, value in zip(TEMPLATES[template], values, strict=False):
            template = template.replace("{" + variable + "}", value)
        return template

    return st.sampled_from(sorted(TEMPLATES)).flatmap(
        lambda template: st.builds(fill, st.just(template),
                                   st.lists(st.one_of(st.sampled_from(TEMPLATE_VALUES), st.text(max_size=6)),
                                            min_size=len(TEMPLATES[template]), max_size=len(TEMPLATES[template]))))


@cache
def resource_uris() -> st.SearchStrategy[str]:
    """URIs of real resources, of templates, the templates themselves, and others."""
    return weighted((3, st.sampled_from(RESOURCES)), (4, template_uris()), (1, st.sampled_from(sorted(TEMPLATES))),
                    (1, text_values()), (1, st.sampled_from(["test://nope", "file:///etc/passwd", "memo://items/"])))


@cache
def prompt_names() -> st.SearchStrategy[str]:
    return weighted((9, st.sampled_from(sorted(PROMPTS))), (1, text_values()))


@cache
def string_maps(names: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments of prompts and completion contexts: strings mostly, any value now and then."""
    return st.dictionaries(names, weighted((5, text_values()), (1, json_values(4))), max_size=4)


@cache
def completion_refs() -> st.SearchStrategy[dict[str, Any]]:
    prompt = st.fixed_dictionaries({"type": st.just("ref/prompt"), "name": prompt_names()})
    resource = st.fixed_dictionaries({"type": st.just("ref/resource"), "uri": resource_uris()})
    return st.one_of(prompt, resource, st.fixed_dictionaries({"type": text_values()}, optional={"name": text_values()}))


@cache
def argument_names() -> st.SearchStrategy[str]:
    known = sorted({name for names in PROMPTS.values() for name in names}
                   | {name for names in TEMPLATES.values() for name in names})
    return weighted((4, st.sampled_from(known)), (1, text_values()))


# Params per method --------------------------------------------------------------------------

@cache
def _tool_call() -> st.SearchStrategy[dict[str, Any]]:
    def arguments(name: str) -> st.SearchStrategy[dict[str, Any]]:
        known = TOOL_ARGUMENTS.get(name, {})
        return st.one_of(st.fixed_dictionaries({}, optional=known),
                         st.fixed_dictionaries({}, optional=known).flatmap(
                             lambda args: st.dictionaries(st.text(max_size=6), json_values(6), max_size=2).map(
                                 lambda extra: {**extra, **args})),
                         st.dictionaries(st.sampled_from(sorted(known) or ["x"]), any_values(), max_size=3))

    return tool_names().flatmap(lambda name: st.fixed_dictionaries(
        {"name": st.just(name)}, optional={"arguments": arguments(name)}))


@cache
def _listen() -> st.SearchStrategy[dict[str, Any]]:
    flags = {flag: st.booleans() for flag in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")}
    return st.fixed_dictionaries({"notifications": st.fixed_dictionaries(
        {}, optional={**flags, "resourceSubscriptions": st.lists(resource_uris(), max_size=4)})})


@cache
def _initialize() -> st.SearchStrategy[dict[str, Any]]:
    versions = weighted((12, st.sampled_from(LEGACY_VERSIONS)), (1, st.sampled_from(ALL_VERSIONS)), (1, text_values()),
                        (1, any_values()))
    return st.fixed_dictionaries(
        {"protocolVersion": versions, "capabilities": client_capabilities(),
         "clientInfo": st.fixed_dictionaries({"name": text_values(), "version": st.just("1")})})


@cache
def client_capabilities() -> st.SearchStrategy[Any]:
    """Declared client capabilities: real ones in any combination (so tools may ask), or junk."""
    real = st.fixed_dictionaries({}, optional={"elicitation": st.sampled_from([{}, {"form": {}, "url": {}}]),
                                               "sampling": st.just({}), "roots": st.just({"listChanged": True})})
    return weighted((9, real), (1, json_values(6)))


@cache
def input_responses() -> st.SearchStrategy[dict[str, Any]]:
    """2026-07-28 answers to earlier input requests: plausible results under known keys, or junk."""
    answer = st.one_of(st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel", "x"])},
                                             optional={"content": string_maps(text_values())}),
                       st.just({"roots": []}), json_values(6))
    keys = st.sampled_from(["user_name", "user_info", "name", "confirmation", "llm_response", "greeting", "x"])
    return st.dictionaries(keys, answer, max_size=3)


_CURSORS = st.one_of(text_values(), st.sampled_from(["", "eyJ4IjoxfQ", "WyJ0b29sIiwwLDVd", "%%%"]))
NEAR_VALID_PARAMS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "ping": st.just({}),
    "initialize": _initialize(),
    "server/discover": st.just({}),
    "logging/setLevel": st.fixed_dictionaries({"level": st.one_of(st.sampled_from(LOG_LEVELS), text_values())}),
    "tools/list": st.fixed_dictionaries({}, optional={"cursor": _CURSORS}),
    "resources/list": st.fixed_dictionaries({}, optional={"cursor": _CURSORS}),
    "resources/templates/list": st.fixed_dictionaries({}, optional={"cursor": _CURSORS}),
    "prompts/list": st.fixed_dictionaries({}, optional={"cursor": _CURSORS}),
    "tools/call": _tool_call(),
    "resources/read": st.fixed_dictionaries({"uri": resource_uris()}),
    "resources/subscribe": st.fixed_dictionaries({"uri": resource_uris()}),
    "resources/unsubscribe": st.fixed_dictionaries({"uri": resource_uris()}),
    "prompts/get": st.fixed_dictionaries({"name": prompt_names()},
                                         optional={"arguments": string_maps(argument_names())}),
    "completion/complete": st.fixed_dictionaries(
        {"ref": completion_refs(),
         "argument": st.fixed_dictionaries({"name": argument_names(), "value": text_values()})},
        optional={"context": st.fixed_dictionaries({}, optional={"arguments": string_maps(argument_names())})}),
    "subscriptions/listen": _listen(),
}
# Methods whose 2026-07-28 retry may carry answers (MCP spec 2026-07-28, basic/patterns/mrtr).
INPUT_METHODS = ("tools/call", "prompts/get", "resources/read")


@st.composite
def mutated(draw: st.DrawFn, params: dict[str, Any]) -> Any:
    """``params`` as they are (mostly), or with one key dropped, retyped or added, or replaced."""
    choice = draw(st.sampled_from(["keep"] * 36 + ["drop", "retype", "add", "replace"]))
    params = dict(params)
    if choice == "drop" and params:
        params.pop(draw(st.sampled_from(sorted(params))))
    elif choice == "retype" and params:
        params[draw(st.sampled_from(sorted(params)))] = draw(any_values())
    elif choice == "add":
        params[draw(st.text(max_size=8))] = draw(json_values(6))
    elif choice == "replace":
        return draw(st.one_of(st.dictionaries(st.text(max_size=8), json_values(6), max_size=3), any_values()))
    return params


@st.composite
def method_and_params(draw: st.DrawFn, era: str) -> tuple[str, Any]:
    """A method (from the spec, mostly the era's own) and its params, near-valid for ``era`` ("legacy"/"modern")."""
    own = MODERN_METHODS if era == "modern" else LEGACY_METHODS
    method = draw(weighted((16, st.sampled_from(own)), (1, st.sampled_from(CLIENT_METHODS)),
                           (1, st.sampled_from(STRANGE_METHODS)), (1, text_values())))
    params = draw(NEAR_VALID_PARAMS.get(method, st.just({})))
    if era == "modern" and method in INPUT_METHODS and draw(st.integers(0, 3)) == 0:
        params = {**params, "inputResponses": draw(input_responses())}
        if draw(st.booleans()):
            params["requestState"] = draw(st.one_of(text_values(), st.just("eyJhIjp7fX0.x.y")))
    return method, draw(mutated(params))


# The 2026-07-28 envelope ---------------------------------------------------------------------

@cache
def modern_meta(consistent: bool) -> st.SearchStrategy[dict[str, Any]]:
    """
    A ``params._meta``: with ``consistent``, the required keys present and right (other keys may
    still be odd); without, any of them missing, of the wrong type or naming another version.
    """
    optional = {INFO: weighted((6, st.just({"name": "fuzz", "version": "1"})), (1, json_values(4))),
                LEVEL: weighted((8, st.sampled_from(LOG_LEVELS)), (1, any_values())),
                "progressToken": st.one_of(st.integers(), text_values(), json_values(3))}
    if consistent:
        return st.fixed_dictionaries({PV: st.just(MODERN), CAPS: client_capabilities()}, optional=optional)
    versions = st.one_of(st.sampled_from(LEGACY_VERSIONS), text_values(), any_values(), st.just(MODERN))
    return st.fixed_dictionaries({}, optional={PV: versions, CAPS: any_values(), **optional})


# Messages ------------------------------------------------------------------------------------

@cache
def request_ids() -> st.SearchStrategy[Any]:
    """Ids as the spec allows them (strings, integers), now and then one it does not."""
    good = st.one_of(st.integers(-(2**53), 2**53), st.integers(0, 1000), text_values())
    return weighted((30, good), (1, st.sampled_from([None, True, 1.5, [], {}])))


@st.composite
def envelope_damage(draw: st.DrawFn, message: dict[str, Any]) -> Any:
    """The JSON-RPC envelope of ``message`` (mostly) intact, or broken in one way."""
    choice = draw(st.sampled_from(["keep"] * 100 + ["version", "no_version", "method", "params", "response",
                                                     "notification", "not_object"]))
    message = dict(message)
    if choice == "version":
        message["jsonrpc"] = draw(st.one_of(st.just("1.0"), json_values(3)))
    elif choice == "no_version":
        message.pop("jsonrpc")
    elif choice == "method":
        message["method"] = draw(json_values(3))
    elif choice == "params":
        message["params"] = draw(st.one_of(st.lists(json_values(3), max_size=2), scalars()))
    elif choice == "response":
        message.pop("method", None)
        message.pop("params", None)
        message[draw(st.sampled_from(["result", "error"]))] = draw(json_values(4))
    elif choice == "notification":
        message["method"] = draw(st.sampled_from(NOTIFICATION_METHODS))
        message.pop("id", None)
    elif choice == "not_object":
        return draw(st.one_of(scalars(), st.lists(json_values(3), max_size=2)))
    return message


@st.composite
def legacy_messages(draw: st.DrawFn) -> Any:
    """A message for a legacy session (no version in ``_meta``)."""
    method, params = draw(method_and_params("legacy"))
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(request_ids()), "method": method}
    if draw(st.integers(0, 7)):
        message["params"] = params
    if isinstance(params, dict) and draw(st.integers(0, 5)) == 0:
        params["_meta"] = {"progressToken": draw(st.one_of(st.integers(), text_values()))}
    return draw(envelope_damage(message))


@cache
def initialize_params() -> st.SearchStrategy[Any]:
    """``initialize`` params that make a session nearly always: a legacy version, real capabilities."""
    return weighted((8, NEAR_VALID_PARAMS["initialize"]), (1, NEAR_VALID_PARAMS["initialize"].flatmap(mutated)))


@st.composite
def modern_messages(draw: st.DrawFn, consistent: bool = True) -> Any:
    """A 2026-07-28 request: ``_meta`` in params, right (``consistent``) or wrong in some way."""
    method, params = draw(method_and_params("modern"))
    if isinstance(params, dict):
        params = {**params, "_meta": draw(modern_meta(consistent))}
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(request_ids()), "method": method, "params": params}
    return draw(envelope_damage(message))
