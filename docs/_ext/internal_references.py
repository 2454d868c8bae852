"""
Cross-references to django_mcp's internals, under ``nitpicky``.

The reference documents the public API only, but docstrings and type hints also name internal
modules and classes (``RequestContext``, :mod:`django_mcp.transports.health`…), which have no page
to link to. Ignoring every ``django_mcp.*`` reference would also hide the broken ones (a renamed
class, a typo). So a Python reference that Sphinx cannot resolve is handled here:

1. a short name that matches exactly one documented object (``McpSite`` written in a module that
   does not import it) links to that object, as ``.McpSite`` would;
2. a name that exists in the code is accepted as plain, unlinked text: looked up from the module
   and class the reference is written in, the module whose docstring holds it (a function
   re-exported elsewhere), and the names those modules import, ``TYPE_CHECKING`` imports included.

Anything else still warns, and fails the build under ``-W``.
"""

from __future__ import annotations

import ast
import inspect
from functools import cache
from importlib import import_module
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.nodes import make_refnode


_MISSING = object()


def _resolve(dotted: str) -> Any:
    """The object ``dotted`` names, or ``_MISSING``."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value: Any = import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for index, name in enumerate(parts[split:], start=split):
            if hasattr(value, name):
                value = getattr(value, name)
            elif inspect.ismodule(value) and name in _imported_names(value.__name__):
                return _resolve(".".join([_imported_names(value.__name__)[name], *parts[index + 1:]]))
            else:
                return _MISSING
        return value
    return _MISSING


@cache
def _imported_names(module: str) -> dict[str, str]:
    """Names a module imports anywhere (``if TYPE_CHECKING:`` and functions too) → where from."""
    try:
        source = inspect.getsource(import_module(module))
    except (ImportError, OSError, TypeError):
        return {}
    # Relative imports count from the package: the module itself when it is one.
    package = module if hasattr(import_module(module), "__path__") else module.rsplit(".", 1)[0]
    names: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            origin = f"{base}.{node.module}" if node.level and node.module else base if node.level else node.module
            for alias in node.names:
                names[alias.asname or alias.name] = f"{origin}.{alias.name}"
    return names


def _candidates(node: nodes.Element) -> list[str]:
    target = node["reftarget"].lstrip(".~")
    module, cls = node.get("py:module"), node.get("py:class")
    prefixes = []
    if module and cls:
        prefixes.append(f"{module}.{cls}")
        owner = _resolve(f"{module}.{cls}")
        if owner is not _MISSING and hasattr(owner, "__module__"):
            # A class documented where it is re-exported (django_mcp.tools.Tool): its docstring's
            # names are those of the module that defines it.
            prefixes += [f"{owner.__module__}.{owner.__qualname__}", owner.__module__]
    if module:
        prefixes.append(module)
    # "…docstring of django_mcp.admin_actions.actions.admin_action_tools": the defining module.
    source = str(node.source or "")
    if "docstring of " in source:
        dotted = source.rsplit("docstring of ", 1)[1].split(":")[0].strip()
        parts = dotted.split(".")
        prefixes += [".".join(parts[:n]) for n in range(len(parts), 0, -1)]
    return [target] + [f"{prefix}.{target}" for prefix in prefixes]


def resolve_internal(app: Sphinx, env: Any, node: nodes.Element, contnode: nodes.Element) -> Any:
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    target = node["reftarget"].lstrip(".~")
    if "." not in target:
        matches = [(name, obj) for name, obj in domain.objects.items() if name.endswith("." + target)
                   and name.startswith("django_mcp")]
        if len(matches) == 1:
            name, obj = matches[0]
            return make_refnode(app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, name)
    if any(name.startswith("django_mcp") and _resolve(name) is not _MISSING for name in _candidates(node)):
        return contnode
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    # After the Python domain has tried (a larger priority number runs later).
    app.connect("missing-reference", resolve_internal, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
