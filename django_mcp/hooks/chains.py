"""
What a site derives from its hooks, made once per change of them (:class:`HookChains`): for each
question and kind, the hooks that answer it, and for each point the composed chain an operation
runs through — each hook's method bound to the next, the operation's own ``perform`` innermost.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from .operations import Operation

# A django_mcp.hooks.Hook; not imported, for the package imports this module.
Hook = Any

Step = Callable[[Any], Awaitable[Any]]

#: The points whose operation is about a primitive of some kind: a hook's ``kinds`` filters them.
#: The others (``request``, ``notification``, ``ask``, ``listen``) are about messages and are
#: asked of every hook that overrides them.
PRIMITIVE_POINTS = frozenset({"call", "read", "get_prompt", "complete", "list", "subscribe"})

#: How long a dormant hook (``Hook.active()`` False) is left alone before it is asked again.
RECHECK_SECONDS = 1.0


class HookChains:
    """
    What a site derives from its ``hooks`` (outermost first), per question and kind:
    :meth:`allows`, :meth:`definitions`, :meth:`around` a point; and :meth:`run`, which passes an
    operation through the hooks around its point, outermost first.
    """

    def __init__(self, hooks: Iterable[Hook]) -> None:
        given = tuple(hooks)
        self.hooks = tuple(hook for hook in given if hook.active())
        #: The hooks left out because they had nothing to do yet (``Hook.active()`` was False).
        self.dormant = tuple(hook for hook in given if hook not in self.hooks)
        self._next_check = 0.0
        self._asked: dict[tuple[str, str | None], tuple[Hook, ...]] = {}
        self._chains: dict[tuple[str, str | None], Step] = {}

    def _hooks_for(self, name: str, kind: str | None) -> tuple[Hook, ...]:
        slot = (name, kind)
        found = self._asked.get(slot)
        if found is None:
            found = self._asked[slot] = tuple(
                hook for hook in self.hooks
                if hook.overrides(name) and (kind is None or hook.applies_to(kind)))
        return found

    def stale(self) -> bool:
        """
        Whether a dormant hook has woken up, so the chains must be made again with it: asked on
        every request while one sleeps, so the hooks themselves are asked at most once every
        :data:`RECHECK_SECONDS`.
        """
        now = time.monotonic()
        if now < self._next_check:
            return False
        self._next_check = now + RECHECK_SECONDS
        return any(hook.active() for hook in self.dormant)

    def allows(self, kind: str) -> tuple[Hook, ...]:
        """The hooks asked whether a primitive of ``kind`` may be seen and used."""
        return self._hooks_for("allows", kind)

    def definitions(self, kind: str) -> tuple[Hook, ...]:
        """The hooks asked for the listing entry of a primitive of ``kind``."""
        return self._hooks_for("definition", kind)

    def around(self, point: str, kind: str | None = None) -> tuple[Hook, ...]:
        """
        The hooks around ``point`` (a :class:`~django_mcp.hooks.Hook` method name) for a primitive
        of ``kind``, outermost first; empty when no hook overrides it, so the caller may skip
        making the operation at all.
        """
        return self._hooks_for(point, kind if point in PRIMITIVE_POINTS else None)

    @property
    def calls(self) -> tuple[Hook, ...]:
        """The hooks around ``tools/call``."""
        return self.around("call", "tool")

    def run(self, operation: Operation) -> Awaitable[Any]:
        """``operation`` through every hook around its point, then its own ``perform``."""
        point = operation.point
        kind = operation.kind if point in PRIMITIVE_POINTS else None
        chain = self._chains.get((point, kind))
        if chain is None:
            # Composed once per point and kind, not per operation: each hook gets the next as call_next.
            chain = _perform
            for hook in reversed(self.around(point, kind)):
                chain = _bind(getattr(hook, point), chain)
            self._chains[(point, kind)] = chain
        return chain(operation)


def _perform(operation: Operation) -> Awaitable[Any]:
    return operation.perform()


def _bind(method: Callable[[Any, Step], Awaitable[Any]], following: Step) -> Step:
    def step(operation: Any) -> Awaitable[Any]:
        return method(operation, following)

    return step
