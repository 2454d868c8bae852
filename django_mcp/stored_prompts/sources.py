"""
Staff's prompts as a source of the site (:class:`DatabasePrompts`): the enabled rows of
:class:`~django_mcp.stored_prompts.models.McpPrompt`, served before the prompt files of
``django_mcp.template_prompts``, whose names they override.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..sources import PrimitiveSource
from ..template_prompts.templates import TemplatePrompt


if TYPE_CHECKING:
    from ..context import Context
    from ..primitives import Primitive


class DatabasePrompts(PrimitiveSource):
    """The enabled rows of :class:`~django_mcp.stored_prompts.models.McpPrompt`, in primary-key order."""

    kind = "prompt"
    #: Before the prompt files (200), whose names the rows override.
    order = 100

    def __init__(self, site: Any = None) -> None:
        self.site = site
        # pk → (updated_at, prompt): a row's template is compiled once per version, on any worker.
        self._built: dict[Any, tuple[Any, TemplatePrompt]] = {}

    def __repr__(self) -> str:
        return "<DatabasePrompts>"

    def queryset(self) -> Any:
        from .models import McpPrompt

        rows = McpPrompt.objects.filter(enabled=True)
        if self.site is not None:
            # Never served under a name a prompt in code has; the admin refuses such names too.
            rows = rows.exclude(name__in=[p.name for p in self.site.prompts])
        return rows

    def prompt_for(self, row: Any) -> TemplatePrompt:
        built = self._built.get(row.pk)
        if built is None or built[0] != row.updated_at:
            built = self._built[row.pk] = (row.updated_at, row.as_prompt(site=self.site))
        return built[1]

    async def candidates(self, ctx: Context, position: Any, limit: int) -> tuple[list[tuple[Primitive, Any]], bool]:
        rows = self.queryset().order_by("pk")
        if position is not None:
            rows = rows.filter(pk__gt=position)
        fetched = [row async for row in rows[:limit + 1]]
        return [(self.prompt_for(row), row.pk) for row in fetched[:limit]], len(fetched) > limit

    async def lookup(self, key: str, ctx: Context) -> Primitive | None:
        row = await self.queryset().filter(name=key).afirst()
        return None if row is None else self.prompt_for(row)

    async def names_among(self, names: list[str]) -> set[str]:
        """Which of ``names`` an enabled row has (they hide the file prompts of those names)."""
        return {name async for name in self.queryset().filter(name__in=names).values_list("name", flat=True)}
