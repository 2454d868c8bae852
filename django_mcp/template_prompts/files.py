"""
Prompt files: every template under ``mcp/prompts/`` in any template directory is a prompt
(:class:`TemplatePromptFiles`, a :class:`~django_mcp.sources.PrimitiveSource` of the site).

Name clashes: a prompt registered in code wins over a file prompt of the same name, and so does
a prompt of any source served before the files (the database prompts of
``django_mcp.stored_prompts``). So staff can override a prompt shipped as a file without a deploy,
and nobody can override one written in Python; what is overridden is neither listed nor served.
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
    #: After the sources that may override a file (the database prompts, 100).
    order = 200

    def __init__(self, site: Any = None, *, engine_name: str | None = None, folder: str = PROMPTS_FOLDER) -> None:
        self.site = site
        self.engine_name = engine_name
        self.folder = folder
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
        if self.site is None or not prompts:
            return prompts
        names = [p.name for p in prompts]
        hidden: set[str] = set()
        for source in self.site.sources("prompt"):
            if source is self:
                break
            hidden |= await source.names_among(names) or set()
        return [p for p in prompts if p.name not in hidden and self.site.get_registered("prompt", p.name) is None]

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
        # The site asks the sources before this one first (the database prompts), so this is
        # reached only when none of them has the name.
        prompt = next((p for p in self.prompts() if p.name == key), None)
        registered = self.site is not None and self.site.get_registered("prompt", key) is not None
        return None if prompt is None or registered else prompt
