"""Resources: data the client may read by URI (digest §4.2)."""

from .base import Resource, ResourceTemplate


__all__ = ["Resource", "ResourceTemplate"]
