"""
What an :class:`~django_mcp.sites.McpSite` holds — its primitives, sources and registered models,
and what each model contributed — as one object the admin-style autodiscovery can copy and put
back when an app's ``mcp`` module fails to import.
"""

from __future__ import annotations

import copy
from typing import Any

from .model_options import ModelOptions
from .primitives import Primitive
from .sources import KINDS, PrimitiveSource, RegisteredPrimitives


class SiteRegistry:
    """What a site holds; copied and restored by ``autodiscover_modules`` when an ``mcp`` module fails."""

    def __init__(self) -> None:
        self.primitives = {kind: RegisteredPrimitives(kind) for kind in KINDS}
        self.sources: dict[str, list[PrimitiveSource]] = {kind: [] for kind in KINDS}
        self.models: dict[Any, ModelOptions] = {}
        # What each model contributed, so unregistering it withdraws exactly that.
        self.contributions: dict[Any, tuple[list[Primitive], list[PrimitiveSource]]] = {}

    def __copy__(self) -> SiteRegistry:
        clone = SiteRegistry()
        clone.primitives = {kind: copy.copy(registered) for kind, registered in self.primitives.items()}
        clone.sources = {kind: list(sources) for kind, sources in self.sources.items()}
        clone.models = dict(self.models)
        clone.contributions = dict(self.contributions)
        return clone


def is_primitive(value: Any) -> bool:
    """Whether ``value`` is a primitive (a tool, resource, template or prompt) or a class of one."""
    return isinstance(value, Primitive) or (isinstance(value, type) and issubclass(value, Primitive))
