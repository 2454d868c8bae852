"""Completion callables for prompt arguments and template variables (MCP spec 2026-07-28, server/utilities/completion)."""

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .threads import in_thread


#: The most values one ``completion/complete`` answers (MCP spec 2025-11-25, server/utilities/completion).
COMPLETION_LIMIT = 100

Completer = Callable[[str, dict[str, str]], Iterable[str] | Awaitable[Iterable[str]]] | Iterable[str]


async def run_completer(completer: Completer, value: str, context: dict[str, str]) -> list[str]:
    """
    Suggestions from a completer: a callable ``(value, context) -> values`` (sync ones run in a
    thread, they may query the database), or a fixed list filtered by prefix.
    """
    if not callable(completer):
        return [str(v) for v in completer if str(v).startswith(value)]
    if inspect.iscoroutinefunction(completer):
        values = await completer(value, context)
    else:
        values = await in_thread(completer)(value, context)
    return [str(v) for v in values]


class Completions(list):
    """
    Suggestions that know whether more exist than were fetched: a completer over a large table
    stops at the first values instead of counting them all, so it reports ``has_more`` and
    leaves ``total`` unknown (MCP spec 2025-11-25, server/utilities/completion: ``total`` is optional).
    """

    def __init__(self, values: Iterable[str] = (), *, has_more: bool = False, total: int | None = None) -> None:
        super().__init__(values)
        self.has_more = has_more
        self.total = total


def completion_result(values: list[str]) -> dict[str, Any]:
    """The ``completion`` of a result from a completer's ``values``: at most :data:`COMPLETION_LIMIT` of them."""
    if isinstance(values, Completions):
        result: dict[str, Any] = {"values": values[:COMPLETION_LIMIT],
                                  "hasMore": values.has_more or len(values) > COMPLETION_LIMIT}
        if values.total is not None:
            result["total"] = values.total
        return result
    return {"values": values[:COMPLETION_LIMIT], "total": len(values), "hasMore": len(values) > COMPLETION_LIMIT}
