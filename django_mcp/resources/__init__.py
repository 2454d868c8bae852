"""
Resources: data the client may read by URI (MCP spec 2026-07-28, server/resources). A Django
model's rows as resources are the feature app ``django_mcp.model_resources``.
"""

from .base import Resource, ResourceTemplate


__all__ = ["Resource", "ResourceTemplate"]
