"""
Resources: data the client may read by URI (MCP spec 2026-07-28, server/resources), and
:class:`ModelResource`, which publishes a Django model's rows as resources.
"""

from typing import Any

from .base import Resource, ResourceTemplate


__all__ = ["ModelResource", "Resource", "ResourceTemplate"]


def __getattr__(name: str) -> Any:
    # ModelResource imports Django REST framework: loaded when first named, not with this package.
    if name == "ModelResource":
        from .models import ModelResource
        return ModelResource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
