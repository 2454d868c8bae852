"""
Icons as MCP describes them (``Icon``, MCP spec 2025-11-25, schema; SEP-973): what a valid one
looks like, for the server's own (``SERVER_ICONS``) and the system check that guards them.
"""

from __future__ import annotations

import re
from typing import Any

_ICON_KEYS = frozenset({"src", "mimeType", "sizes", "theme"})
_ICON_SIZE = re.compile(r"^(\d+x\d+|any)$")


def icon_problem(icon: Any) -> str | None:
    """What is wrong with one ``Icon`` (MCP spec 2025-11-25, schema), or None."""
    if not isinstance(icon, dict):
        return "is not a dict"
    src = icon.get("src")
    if not isinstance(src, str) or not src.startswith(("https://", "http://", "data:image/")):
        return 'needs "src": an https:// (or http://) URL, or a data:image/... URI'
    if set(icon) - _ICON_KEYS:
        return f"has keys an icon does not have: {', '.join(sorted(set(icon) - _ICON_KEYS))}"
    if "theme" in icon and icon["theme"] not in ("light", "dark"):
        return '"theme" is "light" or "dark"'
    sizes = icon.get("sizes", [])
    if not isinstance(sizes, list) or not all(isinstance(size, str) and _ICON_SIZE.match(size) for size in sizes):
        return '"sizes" is a list of "WxH" strings (or "any")'
    if "mimeType" in icon and not isinstance(icon["mimeType"], str):
        return '"mimeType" is a string'
    return None


def valid_icons(icons: Any) -> list[dict[str, Any]]:
    """The icons of ``icons`` (a list, or one) that are valid, as new dicts; the check reports the others."""
    if not isinstance(icons, (list, tuple)):
        icons = [icons] if icons else []
    return [dict(icon) for icon in icons if icon_problem(icon) is None]


__all__ = ["icon_problem", "valid_icons"]
