"""
django_mcp turns a Django project into a Model Context Protocol server.

Register primitives in an app's ``mcp.py``::

    from django_mcp import tool, resource, prompt, Context

    @tool(annotations={"readOnlyHint": True})
    def search_books(query: str, limit: int = 10) -> list[BookOut]:
        "Search the catalogue by title or author."

The names below load lazily, so importing ``django_mcp`` never touches models or settings.
"""

from importlib import import_module
from typing import Any


__all__ = ["Context", "McpSite", "content", "prompt", "resource", "site", "tool"]

_LAZY = {
    "Context": ("django_mcp.context", "Context"),
    "McpSite": ("django_mcp.registry", "McpSite"),
    "site": ("django_mcp.registry", "default_site"),
    "tool": ("django_mcp.registry", "tool"),
    "resource": ("django_mcp.registry", "resource"),
    "prompt": ("django_mcp.registry", "prompt"),
    "content": ("django_mcp.content", None),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'django_mcp' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = import_module(module_name)
    return module if attribute is None else getattr(module, attribute)
