"""
Validating a view's security metadata (ext-apps specification, "UI Resource Format": ``csp``,
``permissions``, ``domain``, ``prefersBorder``). Hosts build the iframe's Content Security Policy
from ``csp``: every entry is an origin — scheme, host and optional port, with at most a leading
``*.`` wildcard — never a path, credentials, a keyword (``'self'``, ``*``) or a ``data:``/``blob:``
source, any of which would widen what the page may reach beyond what it declares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from .constants import CSP_KEYS, PERMISSIONS

# Scheme http(s) or ws(s), an optional leading "*.", a host (letters, digits, dots, dashes) or an
# IPv6 literal, an optional port, nothing after: the SDK's own validator's rule, stricter about hosts.
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$")


def check_origin(value: Any, where: str) -> str:
    """``value`` if it is an origin a CSP list may hold, else ImproperlyConfigured saying why."""
    if not isinstance(value, str) or not _ORIGIN.match(value):
        raise ImproperlyConfigured(
            f"{where}: {value!r} is not an origin (scheme://host[:port], https, http, wss or ws, an optional "
            "leading '*.' wildcard; no path, credentials or CSP keywords)")
    return value


def checked_csp(csp: Mapping[str, Any] | None, where: str) -> dict[str, list[str]] | None:
    """The ``csp`` object to publish, every origin checked; None for none (the host's strict default)."""
    if not csp:
        return None
    unknown = sorted(set(csp) - set(CSP_KEYS))
    if unknown:
        raise ImproperlyConfigured(f"{where}: unknown csp keys {unknown}; known: {', '.join(CSP_KEYS)}")
    checked: dict[str, list[str]] = {}
    for key in CSP_KEYS:
        values = csp.get(key)
        if values is None:
            continue
        if isinstance(values, str) or not isinstance(values, (list, tuple)):
            raise ImproperlyConfigured(f"{where}: csp {key} must be a list of origins")
        checked[key] = [check_origin(value, f"{where}: csp {key}") for value in values]
    return checked


def checked_permissions(permissions: Any, where: str) -> dict[str, dict[str, Any]] | None:
    """``permissions`` (names, or a mapping of names to ``{}``) as the wire object; None for none."""
    if not permissions:
        return None
    names = list(permissions)
    unknown = sorted(set(names) - set(PERMISSIONS))
    if unknown:
        raise ImproperlyConfigured(f"{where}: unknown permissions {unknown}; known: {', '.join(PERMISSIONS)}")
    return {name: {} for name in names}
