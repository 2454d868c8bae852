"""
A stream outlives no credential: an SSE stream (a legacy GET stream, an HTTP+SSE stream, a
2026-07-28 ``subscriptions/listen``, a POST's stream) opened with a credential ends

- at the credential's expiry, if it has one (``expires_at``, seconds since the epoch, as an outside
  issuer's token has it, or ``expires``, a datetime, as django-oauth-toolkit's tokens and personal
  access tokens do), by a timer;
- once its credential no longer authenticates — revoked, its user deactivated, an outside issuer
  calling it inactive — found by running the request's authentication classes again on its own
  headers every ``STREAM_CREDENTIAL_CHECK_SECONDS``, at the stream's next keep-alive comment; and
  at once when a revocation or a deactivation is announced for the stream's user
  (:func:`credentials_changed`, on every worker through the broadcast group).

The stream ends cleanly (the end of its response, as when the server is done); the client's next
request with the credential is refused with a 401 as any request is, so the client reauthorizes.
Anonymous streams are not watched. What a stream's watch holds lives in a weak mapping, not on the
consumer, whose attributes are counted (``HttpStreamConsumer.instance_attributes``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from datetime import datetime
from typing import Any

from ..authentication import AuthenticationFailed, authenticate
from ..conf import mcp_settings


class _Watch:
    __slots__ = ("checked", "expiry")

    def __init__(self, checked: float, expiry: asyncio.TimerHandle | None) -> None:
        self.checked = checked
        self.expiry = expiry


_watches: weakref.WeakKeyDictionary[Any, _Watch] = weakref.WeakKeyDictionary()


def credential_expiry(auth: Any) -> float | None:
    """When ``auth`` stops being valid, in seconds since the epoch; None when it does not say."""
    expires_at = getattr(auth, "expires_at", None)
    if isinstance(expires_at, (int, float)) and not isinstance(expires_at, bool):
        return float(expires_at)
    expires = getattr(auth, "expires", None)
    if isinstance(expires, datetime):
        return expires.timestamp()
    return None


def watch(stream: Any) -> None:
    """Start watching ``stream``'s credential (its ``user`` and ``auth``), as its SSE response begins."""
    if stream in _watches or not getattr(stream.user, "is_authenticated", False):
        return
    expiry = credential_expiry(stream.auth)
    timer = None
    if expiry is not None:
        timer = asyncio.get_running_loop().call_later(max(0.0, expiry - time.time()), _expired, stream)
    _watches[stream] = _Watch(time.monotonic(), timer)


def unwatch(stream: Any) -> None:
    """Stop watching: the stream has ended."""
    found = _watches.pop(stream, None)
    if found is not None and found.expiry is not None:
        found.expiry.cancel()


def _expired(stream: Any) -> None:
    if not stream.finished.is_set() and not stream.disconnected:
        stream.spawn(stream.end_for_credential("expired"))


async def lapsed(stream: Any, *, now: bool = False) -> bool:
    """
    Whether ``stream``'s credential has stopped authenticating: asked at most every interval, or
    ``now`` (an announced change for its user).
    """
    found = _watches.get(stream)
    interval = mcp_settings.STREAM_CREDENTIAL_CHECK_SECONDS
    if found is None or (not now and (interval is None or time.monotonic() - found.checked < interval)):
        return False
    found.checked = time.monotonic()
    try:
        user, _auth = await authenticate(stream.get_authenticators(), stream.incoming_request())
    except AuthenticationFailed:
        return True
    return not getattr(user, "is_authenticated", False) or user.pk != stream.user.pk


def watched_user(stream: Any) -> Any:
    """The primary key of the user whose credential ``stream`` is watched for, or None."""
    return stream.user.pk if stream in _watches else None


def credentials_changed(user_pk: Any) -> None:
    """
    Tell every worker that a credential of the user ``user_pk`` ended (a token revoked, the user
    deactivated): that user's streams check theirs at once instead of at their next interval.
    Call it from synchronous code (a signal receiver, the admin); it announces after the current
    transaction commits, so the check sees the change.
    """
    from asgiref.sync import async_to_sync
    from django.db import transaction

    from ..fanout import BROADCAST_GROUP, CREDENTIALS_CHANGED, publish

    def announce() -> None:
        try:
            async_to_sync(publish)(BROADCAST_GROUP, {"type": CREDENTIALS_CHANGED, "user": str(user_pk)})
        except Exception:  # the periodic check still finds it
            logging.getLogger("django_mcp.transports").warning(
                "Could not announce that a credential of user %s ended", user_pk, exc_info=True)

    transaction.on_commit(announce)


def on_user_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A user saved inactive: their streams check their credentials at once."""
    if not getattr(instance, "is_active", True):
        credentials_changed(instance.pk)


def connect_user_deactivation() -> None:
    """Connect :func:`on_user_saved` to the user model's ``post_save`` (``apps.ready``)."""
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_save

    post_save.connect(on_user_saved, sender=get_user_model(), dispatch_uid="mcp-user-deactivated")


__all__ = ["connect_user_deactivation", "credential_expiry", "credentials_changed", "lapsed", "unwatch", "watch", "watched_user"]
