"""
Hooks: the seam around everything the server serves, which feature apps and projects plug into.

A hook is asked questions, each optional, the way DRF asks a view's permission and throttle
classes and Django runs a request through its middleware:

- :meth:`Hook.allows`: may this request see and use this primitive of this site? A primitive any hook refuses
  is absent from listings and unknown to lookups and calls, exactly like one the primitive's own
  permission classes refuse (MCP spec 2025-11-25, server/tools, "Security Considerations": a
  server validates access on every call).
- :meth:`Hook.definition`: the listing's entry for the primitive, which a hook may change (a
  title, a description, annotations).
- Around each thing the server does, middleware-style — ``call_next(operation)`` to go on, or an
  answer (a result, or a raised ``McpError``) without it, timing or changing what comes back:

  ==========================  ===================================  ==========================================
  method                      around                               the operation (``django_mcp.hooks``)
  ==========================  ===================================  ==========================================
  :meth:`Hook.request`        every request, whatever its method   :class:`McpRequest` → the result
  :meth:`Hook.notification`   every notification the client sends  :class:`McpNotification` → None
  :meth:`Hook.call`           ``tools/call``                       :class:`ToolCall` → the result
  :meth:`Hook.read`           ``resources/read``                   :class:`ResourceRead` → the contents
  :meth:`Hook.get_prompt`     ``prompts/get``                      :class:`PromptGet` → the result
  :meth:`Hook.complete`       ``completion/complete``              :class:`CompletionRequest` → the result
  :meth:`Hook.list`           each page of every ``*/list``        :class:`Listing` → a ``Page``
  :meth:`Hook.subscribe`      ``resources/subscribe``              :class:`Subscription` → None
  :meth:`Hook.listen`         a ``subscriptions/listen`` filter    :class:`ListenFilter` → the honoured filter
  :meth:`Hook.ask`            a request the server sends the       :class:`ClientQuestion` → the answer
                              client (elicitation, sampling…)
  :meth:`Hook.publish`        a change notification leaving this   :class:`Publication` → None
                              worker for every worker's streams
  :meth:`Hook.deliver`        a change notification reaching this  :class:`Delivery` → None
                              worker, handed to its streams
  :meth:`Hook.defer`          work a request leaves for later (a   :class:`Deferral` → None
                              durable task)
  :meth:`Hook.run_deferred`   that work's run, in whichever        :class:`DeferredRun` → None
                              process runs it
  ==========================  ===================================  ==========================================

  ``request`` is the outermost: it wraps the method's own point (a ``tools/call``'s ``call``).
  The points about a primitive (``call``, ``read``, ``get_prompt``, ``complete``, ``list``,
  ``subscribe``) come after the permission checks, with the primitive found: a hook never sees
  what the request may not use. ``publish`` and ``deliver`` belong to no request and no site:
  only hooks installed for every site are asked.

A hook that only observes finished calls needs none of these: the signals
:data:`django_mcp.signals.tool_called` and :data:`~django_mcp.signals.request_served` reach it.

Hooks are installed for every site with :func:`register_hook` (a feature app does it in its
``AppConfig.ready()``), or for one site with ``site.add_hook(hook)``. The first hook installed is
the outermost. A hook that leaves a method alone costs nothing there: the site asks each question
only of the hooks that override it, and a point no hook overrides takes the path it would take if
hooks did not exist — no operation object is made. A hook that has nothing to do yet
(:meth:`Hook.active`) is left out altogether until it has.

An example, a third-party app that hides tools marked ``beta`` from users outside a group::

    # betas/apps.py
    class BetasConfig(AppConfig):
        name = "betas"

        def ready(self):
            from django_mcp.hooks import register_hook
            from .hooks import BetaTools

            register_hook(BetaTools())

    # betas/hooks.py
    from django_mcp.hooks import Hook

    class BetaTools(Hook):
        kinds = {"tool"}

        async def allows(self, site, primitive, ctx):
            if not getattr(primitive, "beta", False):
                return True
            return await ctx.user.groups.filter(name="beta testers").aexists()

And one that keeps a slow resource's contents for a minute, per URI::

    class CachedReports(Hook):
        # Only for reports every user allowed to read them sees alike: the cache key names no user.
        kinds = {"resource_template"}

        async def read(self, read, call_next):
            if not read.uri.startswith("reports://"):
                return await call_next(read)
            key = f"mcp-read:{read.uri}"
            contents = await cache.aget(key)
            if contents is None:
                contents = await call_next(read)
                await cache.aset(key, contents, 60)
            return contents
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from .chains import HookChains
from .messages import ClientQuestion, Deferral, DeferredRun, Delivery, McpNotification, McpRequest, Publication
from .operations import (CompletionRequest, ListenFilter, Listing, Operation, PromptGet, ResourceRead, Subscription,
                         ToolCall)


if TYPE_CHECKING:
    from ..context import Context
    from ..primitives import Primitive
    from ..protocol.backend import Page
    from ..protocol.context import RequestContext  # noqa: F401 - what the operations' hints name

#: What a hook method receives as ``call_next``: the rest of the chain, then the operation itself.
CallNext = Callable[[Any], Awaitable[Any]]


class Hook:
    """
    The base class of hooks (see the module docstring). Override what the hook needs; each method
    is a coroutine function (or a function returning an awaitable: one that only hands the
    operation on may return ``call_next(operation)`` itself) and runs on the event loop, so
    blocking work (the ORM) belongs in a thread (``asgiref.sync.sync_to_async``, or the async ORM). The methods around a point take
    the operation and ``call_next``; the defaults pass the operation on unchanged.
    """

    #: The kinds of primitive this hook is asked about (``"tool"``, ``"resource"``,
    #: ``"resource_template"``, ``"prompt"``); None is every kind. It filters ``allows``,
    #: ``definition`` and the points about a primitive, not those about messages.
    kinds: Iterable[str] | None = None

    async def allows(self, site: Any, primitive: Primitive, ctx: Context) -> bool:
        """Whether the request may see and use ``primitive`` of ``site``; False hides it everywhere."""
        return True

    async def definition(self, site: Any, primitive: Primitive, definition: dict[str, Any],
                         ctx: Context) -> dict[str, Any]:
        """The listing entry of ``primitive`` of ``site`` (change a copy, never the dict passed in)."""
        return definition

    async def request(self, request: McpRequest, call_next: CallNext) -> dict[str, Any]:
        """Around every request the server answers: ``return await call_next(request)``, or a result."""
        return await call_next(request)  # type: ignore[no-any-return]

    async def notification(self, notification: McpNotification, call_next: CallNext) -> None:
        """Around every notification the client sends: ``await call_next(notification)`` to act on it."""
        await call_next(notification)

    async def call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        """Around a ``tools/call``: ``return await call_next(call)``, or a result of the hook's own."""
        return await call_next(call)  # type: ignore[no-any-return]

    async def read(self, read: ResourceRead, call_next: CallNext) -> list[dict[str, Any]]:
        """Around a ``resources/read``: the ``contents`` list, from ``call_next(read)`` or the hook's own."""
        return await call_next(read)  # type: ignore[no-any-return]

    async def get_prompt(self, get: PromptGet, call_next: CallNext) -> dict[str, Any]:
        """Around a ``prompts/get``: the ``GetPromptResult``, from ``call_next(get)`` or the hook's own."""
        return await call_next(get)  # type: ignore[no-any-return]

    async def complete(self, completion: CompletionRequest, call_next: CallNext) -> dict[str, Any]:
        """Around a ``completion/complete``: the completion (``values``, ``total``, ``hasMore``)."""
        return await call_next(completion)  # type: ignore[no-any-return]

    async def list(self, listing: Listing, call_next: CallNext) -> Page:
        """Around one page of a ``*/list`` method (``listing.kind`` says which): the ``Page``."""
        return await call_next(listing)  # type: ignore[no-any-return]

    async def subscribe(self, subscription: Subscription, call_next: CallNext) -> None:
        """Around a legacy ``resources/subscribe``; raise an ``McpError`` to refuse it."""
        await call_next(subscription)

    async def listen(self, listen: ListenFilter, call_next: CallNext) -> dict[str, Any]:
        """Around the filter of a ``subscriptions/listen``: what is honoured (a hook may narrow it)."""
        return await call_next(listen)  # type: ignore[no-any-return]

    async def ask(self, question: ClientQuestion, call_next: CallNext) -> dict[str, Any]:
        """Around a request the server sends the client: the client's result (a refusal raises)."""
        return await call_next(question)  # type: ignore[no-any-return]

    async def publish(self, publication: Publication, call_next: CallNext) -> None:
        """Around a change notification leaving this worker (its ``event["message"]`` is what clients get)."""
        await call_next(publication)

    async def deliver(self, delivery: Delivery, call_next: CallNext) -> None:
        """Around a change notification reaching this worker, handed to its streams by ``call_next``."""
        await call_next(delivery)

    async def defer(self, deferral: Deferral, call_next: CallNext) -> None:
        """Around work a request leaves for later: add to ``deferral.carrier`` what must travel with it."""
        await call_next(deferral)

    async def run_deferred(self, run: DeferredRun, call_next: CallNext) -> None:
        """Around the run of deferred work, ``run.carrier`` as the hooks around its deferral left it."""
        await call_next(run)

    def active(self) -> bool:
        """
        Whether the hook has anything to do now. One that waits for something — the tracing app
        for an OpenTelemetry SDK to be configured — answers False until then: the sites leave it
        out of their chains (so it costs a request nothing) and ask again, at most once a second,
        until it answers True. Make the answer cheap, and never go back to False.
        """
        return True

    def applies_to(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def overrides(self, name: str) -> bool:
        """Whether this hook's class overrides the method ``name`` (a hook that does not is never asked)."""
        return getattr(type(self), name) is not getattr(Hook, name)


_installed: list[Hook] = []
#: Bumped on every change of the installed hooks; sites rebuild what they derived from them.
generation = 0


def register_hook(hook: Hook) -> Hook:
    """Install ``hook`` for every site, after those installed before it; returns it."""
    global generation
    if not isinstance(hook, Hook):
        raise TypeError(f"{hook!r} is not a django_mcp.hooks.Hook")
    if hook not in _installed:
        _installed.append(hook)
        generation += 1
    return hook


def unregister_hook(hook: Hook) -> None:
    """Uninstall ``hook``, which :func:`register_hook` installed (tests; an app that switches itself off)."""
    global generation
    if hook in _installed:
        _installed.remove(hook)
        generation += 1


def installed_hooks() -> tuple[Hook, ...]:
    """The hooks installed for every site, outermost first."""
    return tuple(_installed)


_global_chains: HookChains | None = None
_global_generation = -1


def global_chains() -> HookChains:
    """The chains of the hooks installed for every site: for the points no site owns (``publish``, ``deliver``)."""
    global _global_chains, _global_generation
    if _global_chains is None or _global_generation != generation or (_global_chains.dormant
                                                                       and _global_chains.stale()):
        _global_chains, _global_generation = HookChains(_installed), generation
    return _global_chains


def chains_of(site: Any) -> HookChains | None:
    """The hook chains of ``site`` (an ``McpSite``), or None for a backend without hooks."""
    chains = getattr(site, "hook_chains", None)
    return chains() if chains is not None else None


async def defer(site: Any, request: Any, method: str, target: str, key: str) -> dict[str, Any]:
    """
    What must travel with work ``request`` leaves for later — a durable task (``key``) running
    ``method`` on ``target`` — as the hooks around ``defer`` of ``site`` add it; ``{}`` when none is.
    """
    chains = chains_of(site)
    if chains is None or not chains.around("defer"):
        return {}
    deferral = Deferral(site, request, method, target, key)
    await chains.run(deferral)
    return deferral.carrier


async def run_deferred(site: Any, method: str, target: str, key: str, carrier: dict[str, Any],
                       run: Callable[[], Awaitable[None]]) -> None:
    """
    ``run`` (called with nothing), the work a request deferred — a durable task (``key``) running
    ``method`` on ``target`` — inside the hooks around ``run_deferred`` of ``site``, which find in
    ``carrier`` what the hooks around its deferral added (:func:`defer`).
    """
    chains = chains_of(site)
    if chains is None or not chains.around("run_deferred"):
        await run()
        return
    await chains.run(DeferredRun(site, method, target, key, carrier or {}, run))


__all__ = ["ClientQuestion", "CompletionRequest", "Deferral", "DeferredRun", "Delivery", "Hook", "HookChains",
           "ListenFilter", "Listing", "McpNotification", "McpRequest", "Operation", "Publication", "PromptGet",
           "ResourceRead", "Subscription", "ToolCall", "defer", "installed_hooks", "register_hook", "run_deferred",
           "unregister_hook"]
