"""
Redacting arguments before they are written anywhere a person reads them (the call log, the
request log): the values of keys with secret-sounding names are replaced, at any depth.
"""

from collections.abc import Iterable
from typing import Any


REDACTED = "[redacted]"

_lowered: dict[int, tuple[Any, frozenset[str]]] = {}


def redacted_names(configured: Iterable[str]) -> frozenset[str]:
    """
    A setting's list of key names as a lower-case set, made again only when the setting's list
    object changes (a settings reload makes a new one).
    """
    cached = _lowered.get(id(configured))
    if cached is None or cached[0] is not configured:
        if len(_lowered) >= 8:
            _lowered.clear()  # lists of settings reloaded since (tests change them often)
        cached = _lowered[id(configured)] = (configured, frozenset(str(name).lower() for name in configured))
    return cached[1]


def redact(value: Any, names: frozenset[str]) -> Any:
    """``value`` with the values of keys in ``names`` (case-insensitive) replaced, at any depth."""
    if isinstance(value, dict):
        return {key: REDACTED if str(key).lower() in names else redact(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item, names) for item in value]
    return value
