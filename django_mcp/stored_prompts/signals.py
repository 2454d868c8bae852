"""Saving or deleting a prompt row tells connected clients on every worker (``notifications/prompts/list_changed``)."""

from typing import Any

from django.db.models.signals import post_delete, post_save


def _prompts_changed(sender: Any, **kwargs: Any) -> None:
    from .stored import announce_change

    announce_change()


def connect() -> None:
    """Connect the receivers (``apps.ready``)."""
    from .models import McpPrompt

    post_save.connect(_prompts_changed, sender=McpPrompt, dispatch_uid="django_mcp_prompt_saved")
    post_delete.connect(_prompts_changed, sender=McpPrompt, dispatch_uid="django_mcp_prompt_deleted")
