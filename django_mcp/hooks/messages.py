"""
The operations of the hook points about messages rather than primitives (``kinds`` does not
filter them): any request and any client notification, the server's questions to its client,
change notifications published and delivered across workers, and work deferred to a durable task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .operations import Operation


if TYPE_CHECKING:
    from ..protocol.context import RequestContext


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


__all__ = ["ClientQuestion", "Deferral", "DeferredRun", "Delivery", "McpNotification", "McpRequest", "Publication"]
