"""Which sites serve query tools, by name: the admin knows a row's site only by its name."""

from __future__ import annotations

import weakref
from typing import Any


# Site name → site. Weak: a test's site that is gone is forgotten.
_sites: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def remember_site(site: Any) -> None:
    """``site`` serves query tools (:func:`~django_mcp.query_tools.source.add_query_tool_source`)."""
    _sites[site.name] = site


def site_named(name: str) -> Any:
    """The site of that name that serves query tools, or the default site if it has that name; else None."""
    site = _sites.get(name)
    if site is None:
        from ..sites import get_default_site

        default = get_default_site()
        site = default if default.name == name else None
    return site
