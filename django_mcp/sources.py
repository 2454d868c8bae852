"""
Where a site's primitives come from, page by page.

A site lists each kind of primitive from a chain of sources: first what was registered in code
(:class:`RegisteredPrimitives`), then any source added at run time — rows of a database table
(tools managed in the admin), the objects of a model (model resources). A source hands out
*candidates* from a position; the site checks each against its permissions and stops as soon as a
page is full, so a listing never loads a whole table and its work per page stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from .context import Context
    from .primitives import Primitive


KINDS = ("tool", "resource", "resource_template", "prompt")


class PrimitiveSource:
    """
    A provider of primitives of one ``kind``. Positions are JSON-able values the source
    understands (an offset, the last primary key…); they travel inside signed cursors.
    """

    kind: str = ""
    #: Where the site serves this source among its run-time sources of the same kind: lower
    #: first, then in the order they were added. A name an earlier source serves wins (the
    #: database prompts, 100, hide the prompt files of the same name, 200).
    order: int = 100

    def may_publish(self) -> bool:
        """
        Whether this source can ever publish anything, even if it is empty now: it decides the
        server's capabilities, so a table whose first row appears later is still announced.
        """
        return True

    async def candidates(self, ctx: Context, position: Any, limit: int
                         ) -> tuple[list[tuple[Primitive, Any]], bool]:
        """
        Up to ``limit`` primitives from ``position`` (None: the start), each with the position
        just after it, and whether more may follow.
        """
        raise NotImplementedError(".candidates() must be overridden.")

    async def lookup(self, key: str, ctx: Context) -> Primitive | None:
        """The primitive with this name (or URI), permissions not yet checked."""
        raise NotImplementedError(".lookup() must be overridden.")

    async def match(self, uri: str, ctx: Context) -> tuple[Primitive, dict[str, str]] | None:
        """For resource sources: the primitive that serves ``uri`` and its variables."""
        primitive = await self.lookup(uri, ctx)
        return (primitive, {}) if primitive is not None else None

    async def names_among(self, names: list[str]) -> set[str] | None:
        """
        Which of ``names`` (or URIs) this source serves, for a later source that hides what an
        earlier one serves under the same name; None when it cannot tell cheaply (it is not asked
        then, and its names hide nothing in listings; lookups still find it first).
        """
        return None


class RegisteredPrimitives(PrimitiveSource):
    """The primitives of one kind registered in code, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.by_key: dict[str, Primitive] = {}
        self._ordered: list[Primitive] | None = []

    def __copy__(self) -> RegisteredPrimitives:
        clone = RegisteredPrimitives(self.kind)
        clone.by_key = dict(self.by_key)
        clone._ordered = None
        return clone

    @property
    def ordered(self) -> list[Primitive]:
        # Kept beside the dict so a page is a slice, not a copy of everything registered.
        if self._ordered is None:
            self._ordered = list(self.by_key.values())
        return self._ordered

    def add(self, primitive: Primitive) -> None:
        self.by_key[primitive.key] = primitive
        if self._ordered is not None:
            self._ordered.append(primitive)

    def remove(self, key: str) -> Primitive | None:
        primitive = self.by_key.pop(key, None)
        if primitive is not None:
            self._ordered = None
        return primitive

    def __iter__(self) -> Iterator[Primitive]:
        return iter(self.ordered)

    def may_publish(self) -> bool:
        return bool(self.by_key)

    async def candidates(self, ctx: Context, position: Any, limit: int
                         ) -> tuple[list[tuple[Primitive, Any]], bool]:
        start = position if isinstance(position, int) and not isinstance(position, bool) and position >= 0 else 0
        ordered = self.ordered
        batch = ordered[start:start + limit]
        return [(primitive, start + index + 1) for index, primitive in enumerate(batch)], \
            start + len(batch) < len(ordered)

    async def lookup(self, key: str, ctx: Context) -> Primitive | None:
        return self.by_key.get(key)

    async def match(self, uri: str, ctx: Context) -> tuple[Primitive, dict[str, str]] | None:
        if self.kind != "resource_template":
            return await super().match(uri, ctx)
        for template in self.ordered:
            variables = template.match(uri)  # type: ignore[attr-defined]
            if variables is not None:
                return template, variables
        return None
