"""Resources: data the client may read by URI (MCP spec 2026-07-28, server/resources)."""

from .base import Resource, ResourceTemplate


__all__ = ["Resource", "ResourceTemplate"]
