"""Tools: Python callables the client's model may call (MCP spec 2026-07-28, server/tools)."""

from .base import Tool


__all__ = ["Tool"]
