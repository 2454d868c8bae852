"""
The ``template-tags-reference`` directive: the template tag libraries of django_mcp's apps
(``{% load mcp_prompts %}``), each with its module docstring and every tag and filter it
registers, described by the compiling function's docstring or else by the docstring of the node
class it returns. A tag described by neither is a warning.
"""

from __future__ import annotations

import inspect
import pkgutil
from importlib import import_module
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from rst_text import indent

logger = logging.getLogger(__name__)


def libraries() -> list[tuple[str, Any]]:
    """(library name, module) for every templatetags module of an installed django_mcp app."""
    from django.apps import apps

    found = []
    for config in apps.get_app_configs():
        if not (config.name == "django_mcp" or config.name.startswith("django_mcp.")):
            continue
        try:
            package = import_module(f"{config.name}.templatetags")
        except ModuleNotFoundError:
            continue
        for info in pkgutil.iter_modules(package.__path__):
            found.append((info.name, import_module(f"{package.__name__}.{info.name}")))
    return sorted(found, key=lambda item: item[0])


def describe(function: Any) -> str:
    """A tag's description: its own docstring, or that of the node class it is annotated to return."""
    if function.__doc__:
        return inspect.cleandoc(function.__doc__)
    returned = inspect.signature(function, eval_str=True).return_annotation
    if inspect.isclass(returned) and returned.__doc__:
        return inspect.cleandoc(returned.__doc__)
    return ""


class TemplateTagsReference(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        blocks = []
        for name, module in libraries():
            self.env.note_dependency(module.__file__)
            title = f"``{{% load {name} %}}``"
            blocks.append(f".. _templatetags-{name}:\n\n{title}\n{'-' * len(title)}")
            blocks.append(inspect.cleandoc(module.__doc__ or "") + f"\n\nThe library is ``{module.__name__}``.")
            library = module.register
            for kind, table in (("tag", library.tags), ("filter", library.filters)):
                for tag, function in sorted(table.items()):
                    text = describe(function)
                    if not text:
                        logger.warning("template %s %r of %s has no docstring", kind, tag, module.__name__,
                                       location=self.get_location())
                    blocks.append(f".. describe:: {{% {tag} %}}\n\n" if kind == "tag" else f".. describe:: |{tag}\n\n")
                    blocks[-1] += indent(f"A {kind} of ``{name}``. {text}")
        return self.parse_text_to_nodes("\n\n".join(blocks), allow_section_headings=True)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("template-tags-reference", TemplateTagsReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
