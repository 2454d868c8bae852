"""
Where template prompts come from at run time: files under ``mcp/prompts/`` in any template
directory (:class:`TemplatePromptFiles`) and rows of :class:`~django_mcp.models.McpPrompt`
(:class:`DatabasePrompts`), both :class:`~django_mcp.sources.PrimitiveSource` chains of a site.

Name clashes: a prompt registered in code wins over a database prompt, which wins over a file
prompt of the same name. So staff can override a prompt shipped as a file without a deploy, and
nobody can override one written in Python; what is overridden is neither listed nor served.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from ..sources import PrimitiveSource
from .engines import project_prompt_engine
from .templates import TemplatePrompt


if TYPE_CHECKING:
    from ..context import Context
    from ..primitives import Primitive

logger = logging.getLogger("django_mcp.prompts")

#: The folder, inside any template directory, whose templates are prompts.
PROMPTS_FOLDER = "mcp/prompts"


def _leaf_loaders(loader: Any) -> Iterator[Any]:
    # The cached loader wraps the real ones.
    inner = getattr(loader, "loaders", None)
    if inner is None:
        yield loader
    else:
        for each in inner:
            yield from _leaf_loaders(each)


def prompt_name(relative: str) -> str:
    """``library/review_book.md`` (under ``mcp/prompts/``) → ``library.review_book``."""
    stem = relative.rsplit(".", 1)[0] if "." in relative.rsplit("/", 1)[-1] else relative
    return stem.replace("/", ".")


def _is_prompt_file(relative: str) -> bool:
    # _partials.md are for {% include %} and {% extends %}; .hidden files are editors' leftovers.
    return not any(part.startswith(("_", ".")) for part in relative.split("/"))


def find_prompt_templates(engine: Any, folder: str = PROMPTS_FOLDER) -> dict[str, str]:
    """
    Prompt name → template name for every template under ``folder``, in the engine's loader
    order, so the template a name resolves to is the one ``get_template`` would load.
    """
    found: dict[str, str] = {}
    for loader in (leaf for top in engine.template_loaders for leaf in _leaf_loaders(top)):
        templates = getattr(loader, "templates_dict", None)  # the locmem loader
        if templates is not None:
            for template_name in templates:
                if template_name.startswith(folder + "/") and _is_prompt_file(template_name[len(folder) + 1:]):
                    found.setdefault(prompt_name(template_name[len(folder) + 1:]), template_name)
            continue
        for directory in getattr(loader, "get_dirs", lambda: [])():
            root = Path(directory) / folder
            if not root.is_dir():
                continue
            for base, dirs, files in os.walk(root):
                dirs.sort()
                for file in sorted(files):
                    relative = (Path(base) / file).relative_to(root).as_posix()
                    if _is_prompt_file(relative):
                        found.setdefault(prompt_name(relative), f"{folder}/{relative}")
    return found


class TemplatePromptFiles(PrimitiveSource):
    """
    Every template under ``mcp/prompts/`` as a prompt named by its path. Found once; with
    ``DEBUG`` on, found again on each listing and lookup, so a new file shows up without a restart.
    A project without a ``DjangoTemplates`` engine has no prompt files: this source is empty, and
    the system check ``django_mcp.W007`` or ``django_mcp.I001`` says why.
    """

    kind = "prompt"

    def __init__(self, site: Any = None, *, engine_name: str | None = None, folder: str = PROMPTS_FOLDER,
                 overridden_by: PrimitiveSource | None = None) -> None:
        self.site = site
        self.engine_name = engine_name
        self.folder = folder
        #: A source whose prompts hide files of the same name (the database prompts).
        self.overridden_by = overridden_by
        self._found: dict[str, str] | None = None
        self._prompts: dict[str, TemplatePrompt] = {}

    def __repr__(self) -> str:
        return f"<TemplatePromptFiles {self.folder!r}>"

    def prompts(self) -> list[TemplatePrompt]:
        if self._found is None or settings.DEBUG:
            engine = project_prompt_engine(self.engine_name)
            found = {} if engine is None else find_prompt_templates(engine, self.folder)
            if found != self._found:
                self._found, self._prompts = found, {}
        prompts = []
        for name, template_name in self._found.items():
            prompt = self._prompts.get(name)
            if prompt is None:
                prompt = self._prompts[name] = self.build(name, template_name)
            if prompt is not False:
                prompts.append(prompt)
        return prompts

    def build(self, name: str, template_name: str) -> TemplatePrompt | bool:
        """A prompt for one file; False (and an error in the log) when its template or header is broken."""
        attrs = {"name": name, "template_name": template_name, "engine_name": self.engine_name, "site": self.site,
                 "__module__": __name__}
        try:
            return type(f"FilePrompt_{name}", (TemplatePrompt,), attrs)()
        except Exception:
            logger.exception("The prompt template %s is not served: it does not compile.", template_name)
            return False

    def may_publish(self) -> bool:
        return bool(self.prompts())

    async def _visible(self, prompts: list[TemplatePrompt]) -> list[TemplatePrompt]:
        hidden: set[str] = set()
        if self.overridden_by is not None and prompts:
            hidden = await self.overridden_by.names_among([p.name for p in prompts])  # type: ignore[attr-defined]
        registered = self.site.get_registered if self.site is not None else (lambda kind, key: None)
        return [p for p in prompts if p.name not in hidden and registered("prompt", p.name) is None]

    async def candidates(self, ctx: Context, position: Any, limit: int) -> tuple[list[tuple[Primitive, Any]], bool]:
        index = position if isinstance(position, int) and not isinstance(position, bool) and position >= 0 else 0
        prompts = self.prompts()
        batch: list[tuple[Primitive, Any]] = []
        # Positions count files, so an overridden file keeps later cursors valid; an empty batch
        # would end this source for the site, so keep reading until something is visible.
        while index < len(prompts) and not batch:
            chunk = prompts[index:index + limit]
            visible = {id(p) for p in await self._visible(chunk)}
            batch = [(p, index + offset + 1) for offset, p in enumerate(chunk) if id(p) in visible]
            index += len(chunk)
        return batch, bool(batch) and batch[-1][1] < len(prompts)

    async def lookup(self, key: str, ctx: Context) -> Primitive | None:
        # No database query: the site asks the database prompts first (add_prompt_sources), and
        # this is reached only when none of them has the name.
        prompt = next((p for p in self.prompts() if p.name == key), None)
        registered = self.site is not None and self.site.get_registered("prompt", key) is not None
        return None if prompt is None or registered else prompt


class DatabasePrompts(PrimitiveSource):
    """The enabled rows of :class:`~django_mcp.models.McpPrompt`, in primary-key order."""

    kind = "prompt"

    def __init__(self, site: Any = None) -> None:
        self.site = site
        # pk → (updated_at, prompt): a row's template is compiled once per version, on any worker.
        self._built: dict[Any, tuple[Any, TemplatePrompt]] = {}

    def __repr__(self) -> str:
        return "<DatabasePrompts>"

    def queryset(self) -> Any:
        from ..models import McpPrompt

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


def add_prompt_sources(site: Any) -> None:
    """Serve database prompts, then files under ``mcp/prompts/``, on ``site`` (after its own prompts)."""
    database = DatabasePrompts(site)
    site.add_source(database)
    site.add_source(TemplatePromptFiles(site, overridden_by=database))
