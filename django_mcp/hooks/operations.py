"""
What a hook sees around each point (:class:`~django_mcp.hooks.Hook`): one object per operation,
naming the site, the request (a :class:`~django_mcp.protocol.context.RequestContext`) and what the
operation is about, and able to :meth:`~Operation.perform` itself — which is what the innermost
``call_next`` does. A hook passes the object on (changed, if it must) or answers without it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar


if TYPE_CHECKING:
    from ..protocol.backend import Page
    from ..protocol.context import RequestContext


class Operation:
    """
    The base of every hook point's object: ``site`` (the ``McpSite`` serving it) and ``request``
    (the :class:`~django_mcp.protocol.context.RequestContext`). :attr:`point` names the
    :class:`~django_mcp.hooks.Hook` method asked around it; :attr:`kind` the kind of primitive it
    is about (a hook's ``kinds`` filter applies), or None for points about messages.
    """

    __slots__ = ("request", "site")
    point: ClassVar[str] = ""

    def __init__(self, site: Any, request: RequestContext) -> None:
        self.site = site
        self.request = request

    @property
    def kind(self) -> str | None:
        return None

    def perform(self) -> Awaitable[Any]:
        """The operation itself, as if no hook were installed."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()!r}>"

    def describe(self) -> str:
        return ""


class ToolCall(Operation):
    """
    One ``tools/call`` (point ``call``) on ``site``: the ``tool`` (after the permission checks),
    the client's ``arguments`` and the ``request``. Hooks may leave word for what runs after them:
    :attr:`outcome` when a hook answered the call itself (``"rate_limited"``), and
    :attr:`record_arguments` False when observers must not keep the arguments.
    """

    __slots__ = ("arguments", "outcome", "record_arguments", "tool")
    point = "call"

    def __init__(self, site: Any, tool: Any, arguments: dict[str, Any], request: RequestContext) -> None:
        super().__init__(site, request)
        self.tool = tool
        self.arguments = arguments
        #: Set by a hook that answered the call itself, for observers (the call log's outcome).
        self.outcome: str | None = None
        #: False: observers (the call log) must not store the arguments of this call.
        self.record_arguments = True

    @property
    def kind(self) -> str:
        return "tool"

    def perform(self) -> Awaitable[dict[str, Any]]:
        return self.tool.run(self.arguments, self.request)  # type: ignore[no-any-return]

    def describe(self) -> str:
        return str(getattr(self.tool, "name", self.tool))


class ResourceRead(Operation):
    """
    One ``resources/read`` (point ``read``) on ``site`` of a ``resource`` or template the
    ``request`` may read: the ``uri`` asked for and the template's ``variables`` (empty for a
    fixed resource). ``call_next`` returns the ``contents`` list.
    """

    __slots__ = ("resource", "uri", "variables")
    point = "read"

    def __init__(self, site: Any, resource: Any, uri: str, variables: dict[str, str], request: RequestContext) -> None:
        super().__init__(site, request)
        self.resource = resource
        self.uri = uri
        self.variables = variables

    @property
    def kind(self) -> str:
        return str(self.resource.kind)

    def perform(self) -> Awaitable[list[dict[str, Any]]]:
        return self.resource.read_contents(self.uri, self.variables, self.request)  # type: ignore[no-any-return]

    def describe(self) -> str:
        return self.uri


class PromptGet(Operation):
    """One ``prompts/get`` (point ``get_prompt``) on ``site``: the ``prompt``, the client's ``arguments``, the ``request``."""

    __slots__ = ("arguments", "prompt")
    point = "get_prompt"

    def __init__(self, site: Any, prompt: Any, arguments: dict[str, str], request: RequestContext) -> None:
        super().__init__(site, request)
        self.prompt = prompt
        self.arguments = arguments

    @property
    def kind(self) -> str:
        return "prompt"

    def perform(self) -> Awaitable[dict[str, Any]]:
        return self.prompt.get(self.arguments, self.request)  # type: ignore[no-any-return]

    def describe(self) -> str:
        return str(getattr(self.prompt, "name", self.prompt))


class CompletionRequest(Operation):
    """
    One ``completion/complete`` (point ``complete``) on ``site`` for an argument of ``target``, a
    prompt or a resource template: ``argument`` (its ``name`` and ``value``), ``context`` (the
    arguments already filled in) and the ``request``; ``run`` computes the completion (what
    ``call_next`` does last). ``call_next`` returns the result (``values``, ``total``, ``hasMore``).
    """

    __slots__ = ("argument", "context", "run", "target")
    point = "complete"

    def __init__(self, site: Any, target: Any, argument: dict[str, Any], context: dict[str, str],
                 request: RequestContext, run: Callable[[CompletionRequest], Awaitable[dict[str, Any]]]) -> None:
        super().__init__(site, request)
        self.target = target
        self.argument = argument
        self.context = context
        self.run = run

    @property
    def kind(self) -> str:
        return str(self.target.kind)

    def perform(self) -> Awaitable[dict[str, Any]]:
        return self.run(self)

    def describe(self) -> str:
        return f"{getattr(self.target, 'key', self.target)}:{self.argument.get('name', '')}"


class Listing(Operation):
    """
    One page of a ``*/list`` method (point ``list``) on ``site``: the ``kind`` of primitive listed
    (``"tool"``, ``"resource"``, ``"resource_template"``, ``"prompt"``), the client's ``cursor``
    and the ``request``. ``call_next`` returns a :class:`~django_mcp.protocol.backend.Page`, whose
    items every ``allows``/``definition`` hook has already been asked about.
    """

    __slots__ = ("_kind", "cursor")
    point = "list"

    def __init__(self, site: Any, kind: str, cursor: str | None, request: RequestContext) -> None:
        super().__init__(site, request)
        self._kind = kind
        self.cursor = cursor

    @property
    def kind(self) -> str:
        return self._kind

    def perform(self) -> Awaitable[Page]:
        return self.site.page(self._kind, self.cursor, self.request)  # type: ignore[no-any-return]

    def describe(self) -> str:
        return self._kind


class Subscription(Operation):
    """
    One legacy ``resources/subscribe`` (point ``subscribe``) on ``site`` to ``uri``, served by
    ``resource`` (a resource or template the ``request`` may read). ``call_next`` subscribes the
    session and returns None; a hook that refuses raises an ``McpError``.
    """

    __slots__ = ("resource", "uri")
    point = "subscribe"

    def __init__(self, site: Any, resource: Any, uri: str, request: RequestContext) -> None:
        super().__init__(site, request)
        self.resource = resource
        self.uri = uri

    @property
    def kind(self) -> str:
        return str(self.resource.kind)

    async def perform(self) -> None:
        session = self.request.session
        assert session is not None  # the handler refuses a subscription without one
        await session.subscribe(self.uri)

    def describe(self) -> str:
        return self.uri


class ListenFilter(Operation):
    """
    The filter of one 2026-07-28 ``subscriptions/listen`` (point ``listen``) on ``site``:
    ``requested``, the client's ``params.notifications``, and the ``request``; ``run`` decides
    what is honoured (what ``call_next`` does last). ``call_next`` returns the subset the server
    honours (and acknowledges); a hook may narrow it, never widen it past what ``call_next`` gave.
    """

    __slots__ = ("requested", "run")
    point = "listen"

    def __init__(self, site: Any, requested: dict[str, Any], request: RequestContext,
                 run: Callable[[ListenFilter], Awaitable[dict[str, Any]]]) -> None:
        super().__init__(site, request)
        self.requested = requested
        self.run = run

    def perform(self) -> Awaitable[dict[str, Any]]:
        return self.run(self)

    def describe(self) -> str:
        return ",".join(sorted(self.requested))


class McpRequest(Operation):
    """
    Any request the server answers (point ``request``) on ``site``, whatever its method —
    ``initialize``, ``ping``, ``tools/call``, an extension's — outermost of all points:
    ``message``, the JSON-RPC message as received, whose :attr:`method` and :attr:`params` (the
    client's, which a hook may replace before ``call_next``) it exposes, and the ``request``;
    ``run`` serves the method (what ``call_next`` does last). ``call_next`` returns the result
    (before the JSON-RPC envelope) or raises ``McpError``, which the client receives as the error.
    """

    __slots__ = ("message", "method", "params", "run")
    point = "request"

    def __init__(self, site: Any, message: dict[str, Any], request: RequestContext,
                 run: Callable[[McpRequest], Awaitable[dict[str, Any]]]) -> None:
        super().__init__(site, request)
        self.message = message
        self.method: str = message.get("method", "")
        self.params: Any = message.get("params")
        self.run = run

    def perform(self) -> Awaitable[dict[str, Any]]:
        return self.run(self)

    def describe(self) -> str:
        return self.method


class McpNotification(Operation):
    """
    A notification the client sent (point ``notification``) to ``site`` —
    ``notifications/cancelled``, ``notifications/initialized``,
    ``notifications/roots/list_changed``…: ``message`` as received (its :attr:`method` and
    :attr:`params`) and the ``request``; ``run`` acts on it (what ``call_next`` does last) and
    returns None. A notification has no answer, so whatever a hook raises is logged, never sent.
    """

    __slots__ = ("message", "method", "params", "run")
    point = "notification"

    def __init__(self, site: Any, message: dict[str, Any], request: RequestContext,
                 run: Callable[[McpNotification], Awaitable[None]]) -> None:
        super().__init__(site, request)
        self.message = message
        self.method: str = message.get("method", "")
        self.params: Any = message.get("params")
        self.run = run

    def perform(self) -> Awaitable[None]:
        return self.run(self)

    def describe(self) -> str:
        return self.method


class ClientQuestion(Operation):
    """
    A request the server sends the client while serving ``request`` on ``site`` (point ``ask``):
    a legacy ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``. ``method`` and
    ``params``, which a hook may change (add to ``_meta``) before ``call_next`` hands them to
    ``send``;
    ``call_next`` returns the client's ``result``, or raises ``ClientRequestError``
    (:mod:`django_mcp.protocol.input`) when the client refused (its ``client_code``) or did not
    answer in time.
    """

    __slots__ = ("method", "params", "send")
    point = "ask"

    def __init__(self, site: Any, method: str, params: dict[str, Any] | None, request: RequestContext,
                 send: Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]) -> None:
        super().__init__(site, request)
        self.method = method
        self.params = params
        self.send = send

    def perform(self) -> Awaitable[dict[str, Any]]:
        return self.send(self.method, self.params)

    def describe(self) -> str:
        return self.method


class Publication(Operation):
    """
    A change notification leaving this worker for the streams of every worker (point
    ``publish``): the channel-layer ``group`` and ``event``, whose ``"message"`` is the
    notification clients receive — a hook may replace the event, adding to the message's
    ``params._meta`` (copies: the publisher may hold them) — and ``send``, which publishes it
    (what ``call_next`` does last). Published from anywhere (a model's ``post_save``, a task), so
    :attr:`site` and :attr:`request` are None: only hooks installed for every site are asked.
    """

    __slots__ = ("event", "group", "send")
    point = "publish"

    def __init__(self, group: str, event: dict[str, Any],
                 send: Callable[[str, dict[str, Any]], Awaitable[None]]) -> None:
        super().__init__(None, None)  # type: ignore[arg-type]
        self.group = group
        self.event = event
        self.send = send

    def perform(self) -> Awaitable[None]:
        return self.send(self.group, self.event)

    def describe(self) -> str:
        return str((self.event.get("message") or {}).get("method", ""))


class Delivery(Operation):
    """
    A change notification (``event``) that reached this worker (point ``deliver``) through the
    channel-layer ``group``, handed by ``hand_over`` (what ``call_next`` does last) to the
    ``streams`` of this worker in that group, each of which still decides whether its user may
    see it. :attr:`site` and :attr:`request` are None: only hooks installed for every site are
    asked.
    """

    __slots__ = ("event", "group", "hand_over", "streams")
    point = "deliver"

    def __init__(self, group: str, event: dict[str, Any], streams: tuple[Any, ...],
                 hand_over: Callable[[Delivery], Awaitable[None] | None]) -> None:
        super().__init__(None, None)  # type: ignore[arg-type]
        self.group = group
        self.event = event
        self.streams = streams
        self.hand_over = hand_over

    async def perform(self) -> None:
        handed = self.hand_over(self)
        if handed is not None:
            await handed

    def describe(self) -> str:
        return str((self.event.get("message") or {}).get("method", ""))


class Deferral(Operation):
    """
    Work a ``request`` on ``site`` leaves to run later, elsewhere (point ``defer``): a durable
    task, made by the tool call it answers. ``carrier`` is a dict the hooks may add to (a trace
    context), kept with the work and given to the hooks around its run (:class:`DeferredRun`);
    ``method``, ``target`` and ``key`` say what the work is (``"tools/call"``, the tool's name,
    the task's id). ``call_next`` returns None.
    """

    __slots__ = ("carrier", "key", "method", "target")
    point = "defer"

    def __init__(self, site: Any, request: RequestContext, method: str, target: str, key: str) -> None:
        super().__init__(site, request)
        self.method = method
        self.target = target
        self.key = key
        self.carrier: dict[str, Any] = {}

    async def perform(self) -> None:
        return None

    def describe(self) -> str:
        return f"{self.method} {self.target}"


class DeferredRun(Operation):
    """
    The run of work a request deferred (point ``run_deferred``) on ``site``: a durable task's, in
    whichever process the task framework runs it, long after the request ended (``request`` is
    None). ``carrier`` is what the hooks around its :class:`Deferral` added; ``method``,
    ``target`` and ``key`` as there; ``run`` does the work (what ``call_next`` does last).
    """

    __slots__ = ("carrier", "key", "method", "run", "target")
    point = "run_deferred"

    def __init__(self, site: Any, method: str, target: str, key: str, carrier: dict[str, Any],
                 run: Callable[[], Awaitable[None]]) -> None:
        super().__init__(site, None)  # type: ignore[arg-type]
        self.method = method
        self.target = target
        self.key = key
        self.carrier = carrier
        self.run = run

    def perform(self) -> Awaitable[None]:
        return self.run()

    def describe(self) -> str:
        return f"{self.method} {self.target}"


__all__ = ["ClientQuestion", "Deferral", "DeferredRun", "Delivery", "Publication", "CompletionRequest", "ListenFilter", "Listing", "McpNotification", "McpRequest",
           "Operation", "PromptGet", "ResourceRead", "Subscription", "ToolCall"]
