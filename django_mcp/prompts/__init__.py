"""Prompts: message templates the user picks (MCP spec 2026-07-28, server/prompts)."""

from .base import Prompt, assistant, user


__all__ = ["Prompt", "assistant", "user"]
