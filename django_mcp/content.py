"""
Builders for the content blocks a tool or prompt returns (MCP spec 2026-07-28, server/tools), as ``mcp_types`` models::

    from django_mcp import content
    return [content.text("Cover:"), content.image(png_bytes, "image/png")]
"""

import base64
from typing import Any

import mcp_types


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def text(value: str, **kwargs: Any) -> mcp_types.TextContent:
    """A text block."""
    return mcp_types.TextContent(text=value, **kwargs)


def image(data: bytes | str, mime_type: str = "image/png", **kwargs: Any) -> mcp_types.ImageContent:
    """An image block; ``data`` is raw bytes or already base64-encoded text."""
    return mcp_types.ImageContent(data=_b64(data), mime_type=mime_type, **kwargs)


def audio(data: bytes | str, mime_type: str = "audio/wav", **kwargs: Any) -> mcp_types.AudioContent:
    """An audio block (2025-03-26 and later)."""
    return mcp_types.AudioContent(data=_b64(data), mime_type=mime_type, **kwargs)


def embedded_text(uri: str, value: str, mime_type: str = "text/plain", **kwargs: Any) -> mcp_types.EmbeddedResource:
    """A resource embedded with its text."""
    resource = mcp_types.TextResourceContents(uri=uri, text=value, mime_type=mime_type)
    return mcp_types.EmbeddedResource(type="resource", resource=resource, **kwargs)


def embedded_blob(uri: str, data: bytes | str, mime_type: str = "application/octet-stream",
                  **kwargs: Any) -> mcp_types.EmbeddedResource:
    """A resource embedded with its bytes."""
    resource = mcp_types.BlobResourceContents(uri=uri, blob=_b64(data), mime_type=mime_type)
    return mcp_types.EmbeddedResource(type="resource", resource=resource, **kwargs)


def resource_link(uri: str, name: str, *, mime_type: str | None = None, description: str | None = None,
                  **kwargs: Any) -> mcp_types.ResourceLink:
    """A link to a resource the client may read (2025-06-18 and later)."""
    return mcp_types.ResourceLink(type="resource_link", uri=uri, name=name, mime_type=mime_type,
                                  description=description, **kwargs)


CONTENT_TYPES = (
    mcp_types.TextContent,
    mcp_types.ImageContent,
    mcp_types.AudioContent,
    mcp_types.EmbeddedResource,
    mcp_types.ResourceLink,
)


def is_content(value: Any) -> bool:
    """Whether ``value`` is a content block model."""
    return isinstance(value, CONTENT_TYPES)


def dump(block: Any) -> dict[str, Any]:
    """A content block (model or dict) as a wire dict."""
    if isinstance(block, dict):
        return block
    return block.model_dump(by_alias=True, mode="json", exclude_none=True)
