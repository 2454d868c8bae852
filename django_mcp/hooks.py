"""
Hooks: the seam around listing and calling that feature apps plug into.

A hook is asked three questions, each optional, the way DRF asks a view's permission and throttle
classes and Django runs a request through its middleware:

- :meth:`Hook.allows`: may this request see and use this primitive of this site? A primitive any hook refuses
  is absent from listings and unknown to lookups and calls, exactly like one the primitive's own
  permission classes refuse (MCP spec 2025-11-25, server/tools, "Security Considerations": a
  server validates access on every call).
- :meth:`Hook.definition`: the listing's entry for the primitive, which a hook may change (a
  title, a description, annotations).
- :meth:`Hook.call`: around a ``tools/call``, middleware-style: call ``call_next(call)`` to go on,
  or answer without it (a refusal as an ``isError`` result), and time or observe what comes back.

A hook that only observes finished calls needs none of these: the signal
:data:`django_mcp.signals.tool_called` reaches it after every call.

Hooks are installed for every site with :func:`register_hook` (a feature app does it in its
``AppConfig.ready()``), or for one site with ``site.add_hook(hook)``. The first hook installed is
the outermost around a call. A hook that leaves a method alone costs nothing there: the site asks
each question only of the hooks that override it, and a site without hooks takes the path it
would take if hooks did not exist.

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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from .context import Context
    from .primitives import Primitive
    from .protocol.context import RequestContext


class ToolCall:
    """
    One ``tools/call`` as hooks and observers see it: the site, the tool (after the permission
    checks), the client's arguments and the request. Hooks may leave word for what runs after
    them: :attr:`outcome` when a hook answered the call itself (``"rate_limited"``), and
    :attr:`record_arguments` False when observers must not keep the arguments.
    """

    __slots__ = ("arguments", "outcome", "record_arguments", "request", "site", "tool")

    def __init__(self, site: Any, tool: Any, arguments: dict[str, Any], request: RequestContext) -> None:
        self.site = site
        self.tool = tool
        self.arguments = arguments
        self.request = request
        #: Set by a hook that answered the call itself, for observers (the call log's outcome).
        self.outcome: str | None = None
        #: False: observers (the call log) must not store the arguments of this call.
        self.record_arguments = True

    def __repr__(self) -> str:
        return f"<ToolCall {getattr(self.tool, 'name', self.tool)!r}>"


CallNext = Callable[[ToolCall], Awaitable[dict[str, Any]]]


class Hook:
    """
    The base class of hooks (see the module docstring). Override what the hook needs; each method
    may be a coroutine function (the site awaits it) and runs on the event loop, so blocking work
    (the ORM) belongs in a thread (``asgiref.sync.sync_to_async``, or the async ORM).
    """

    #: The kinds of primitive this hook is asked about (``"tool"``, ``"resource"``,
    #: ``"resource_template"``, ``"prompt"``); None is every kind. Calls are tools only.
    kinds: Iterable[str] | None = None

    async def allows(self, site: Any, primitive: Primitive, ctx: Context) -> bool:
        """Whether the request may see and use ``primitive`` of ``site``; False hides it everywhere."""
        return True

    async def definition(self, site: Any, primitive: Primitive, definition: dict[str, Any],
                         ctx: Context) -> dict[str, Any]:
        """The listing entry of ``primitive`` of ``site`` (change a copy, never the dict passed in)."""
        return definition

    async def call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        """Around a ``tools/call``: ``return await call_next(call)``, or a result of the hook's own."""
        return await call_next(call)

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
    """Uninstall a hook :func:`register_hook` installed (tests; an app that switches itself off)."""
    global generation
    if hook in _installed:
        _installed.remove(hook)
        generation += 1


def installed_hooks() -> tuple[Hook, ...]:
    """The hooks installed for every site, outermost first."""
    return tuple(_installed)


class HookChains:
    """
    What a site derives from its hooks, made once per change: per kind, the hooks asked
    :meth:`~Hook.allows` and :meth:`~Hook.definition`, and the ``tools/call`` chain.
    """

    def __init__(self, hooks: Iterable[Hook]) -> None:
        self.hooks = tuple(hooks)
        self._allows: dict[str, tuple[Hook, ...]] = {}
        self._definitions: dict[str, tuple[Hook, ...]] = {}
        self.calls = tuple(hook for hook in self.hooks if hook.applies_to("tool") and hook.overrides("call"))
        self._chain: CallNext | None = None
        self._innermost: CallNext | None = None

    def allows(self, kind: str) -> tuple[Hook, ...]:
        found = self._allows.get(kind)
        if found is None:
            found = self._allows[kind] = tuple(h for h in self.hooks if h.applies_to(kind) and h.overrides("allows"))
        return found

    def definitions(self, kind: str) -> tuple[Hook, ...]:
        found = self._definitions.get(kind)
        if found is None:
            found = self._definitions[kind] = tuple(
                h for h in self.hooks if h.applies_to(kind) and h.overrides("definition"))
        return found

    def run_call(self, call: ToolCall, innermost: CallNext) -> Awaitable[dict[str, Any]]:
        """``call`` through every call hook, outermost first, then ``innermost`` (the tool itself)."""
        chain = self._chain
        if chain is None or self._innermost is not innermost:
            # Composed once per innermost step, not per call: each hook gets the next as call_next.
            chain = innermost
            for hook in reversed(self.calls):
                chain = _bind(hook, chain)
            self._chain, self._innermost = chain, innermost
        return chain(call)


def _bind(hook: Hook, following: CallNext) -> CallNext:
    def step(call: ToolCall) -> Awaitable[dict[str, Any]]:
        return hook.call(call, following)

    return step


__all__ = ["CallNext", "Hook", "HookChains", "ToolCall", "installed_hooks", "register_hook", "unregister_hook"]
