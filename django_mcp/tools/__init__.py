"""Tools: Python callables the client's model may call (digest §4.1)."""

from .base import Tool


__all__ = ["Tool"]
