"""
django_mcp turns a Django project into a Model Context Protocol server.

Register primitives in an app's ``mcp.py``, as functions or as options classes::

    from django_mcp import Tool, tool, register

    @tool(annotations={"readOnlyHint": True})
    def search_books(query: str, limit: int = 10) -> list[BookOut]:
        "Search the catalogue by title or author."

    @register()
    class LendBook(Tool):
        permission_classes = ["library.change_book"]

        async def call(self, book_id: int) -> str: ...

The names below load lazily, so importing ``django_mcp`` never touches models or settings.
"""

from importlib import import_module
from typing import Any


__all__ = ["Context", "McpSite", "ModelOptions", "Prompt", "Resource", "ResourceTemplate", "Tool",
           "ToolError", "autodiscover", "content", "permissions", "prompt", "register", "resource", "site", "tool"]

_LAZY = {
    "Context": ("django_mcp.context", "Context"),
    "McpSite": ("django_mcp.sites", "McpSite"),
    "ModelOptions": ("django_mcp.model_options", "ModelOptions"),
    "Prompt": ("django_mcp.prompts", "Prompt"),
    "Resource": ("django_mcp.resources", "Resource"),
    "ResourceTemplate": ("django_mcp.resources", "ResourceTemplate"),
    "Tool": ("django_mcp.tools", "Tool"),
    "ToolError": ("django_mcp.exceptions", "ToolError"),
    "autodiscover": ("django_mcp.sites", "autodiscover"),
    "site": ("django_mcp.sites", "site"),
    "register": ("django_mcp.decorators", "register"),
    "tool": ("django_mcp.decorators", "tool"),
    "resource": ("django_mcp.decorators", "resource"),
    "prompt": ("django_mcp.decorators", "prompt"),
    "content": ("django_mcp.content", None),
    "permissions": ("django_mcp.permissions", None),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'django_mcp' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = import_module(module_name)
    return module if attribute is None else getattr(module, attribute)
