"""
What a hook sees around each point (:class:`~django_mcp.hooks.Hook`): one object per operation,
naming the site, the request (a :class:`~django_mcp.protocol.context.RequestContext`) and what the
operation is about, and able to :meth:`~Operation.perform` itself — which is what the innermost
``call_next`` does. A hook passes the object on (changed, if it must) or answers without it.

Here the base class and the operations about a primitive (``kinds`` filters them);
:mod:`django_mcp.hooks.messages` holds those about messages.
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


__all__ = ["CompletionRequest", "ListenFilter", "Listing", "Operation", "PromptGet", "ResourceRead", "Subscription",
           "ToolCall"]
