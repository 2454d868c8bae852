"""Prompts: message templates the user picks (digest §4.3)."""

from .base import Prompt, assistant, user


__all__ = ["Prompt", "assistant", "user"]
