"""
Revocations announced to the streams (``transports.credential_watch``): a personal access token
revoked, and a django-oauth-toolkit access token deleted — which is how DOT revokes one (its
revocation endpoint, a refresh token's rotation or reuse, the admin) — make that user's streams
check their credential at once, on every worker.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from ..transports.credential_watch import credentials_changed


def on_personal_token_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    if instance.revoked is not None:
        credentials_changed(instance.user_id)


def on_access_token_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    if instance.user_id is not None:
        credentials_changed(instance.user_id)


def connect() -> None:
    """Connect the receivers (``apps.ready``); connecting twice changes nothing."""
    from oauth2_provider.models import get_access_token_model

    from .models import PersonalAccessToken

    post_save.connect(on_personal_token_saved, sender=PersonalAccessToken, dispatch_uid="mcp-pat-revoked")
    post_delete.connect(on_access_token_deleted, sender=get_access_token_model(), dispatch_uid="mcp-token-deleted")


__all__ = ["connect"]
