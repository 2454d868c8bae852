"""
Whether a change notification may reach a stream. A notification about a row says that the row
exists and changed, so each stream delivers it only if its user may read that row now (model
resources tag their notifications with what to check; see ``SiteBackend.may_notify``).
"""

import asyncio
import logging
from typing import Any

from ..protocol.context import RequestContext
from ..protocol.versions import Era
from .requests import release_handle


logger = logging.getLogger("django_mcp.transports")


async def may_deliver(event: dict[str, Any], backend: Any, *, user: Any, auth: Any = None) -> bool:
    """
    True when ``event`` has no visibility rule, or ``user`` passes it; False if checking fails.
    Decided once per viewer (user and credential) and backend for each event: the worker hands
    one event to all its streams, and a thousand streams of a few users need a few checks, not a
    thousand. Kept in the event, which lives as long as its hand-over.
    """
    visibility = event.get("visibility")
    if not visibility:
        return True
    decisions = event.get("_decisions")
    if decisions is None:
        decisions = event["_decisions"] = {}
    key = (id(backend), *_viewer(user, auth))
    decision = decisions.get(key)
    if decision is None:
        # A future, so that the viewer's other streams wait for this check instead of repeating it;
        # shielded below, so a stream that goes away meanwhile does not cancel it for the others.
        decision = decisions[key] = asyncio.ensure_future(_may_see(visibility, backend, user, auth))
    return await asyncio.shield(decision)


def _viewer(user: Any, auth: Any) -> tuple[Any, ...]:
    # The same user with the same credential (one token on several streams) is one viewer; a
    # credential without a primary key is told apart by identity, so nothing is shared that
    # a permission reading the credential could tell apart.
    user_key = (type(user), user.pk) if getattr(user, "is_authenticated", False) else (None, None)
    if auth is None:
        return (*user_key, None)
    auth_pk = getattr(auth, "pk", None)
    return (*user_key, (type(auth), auth_pk) if auth_pk is not None else id(auth))


async def _may_see(visibility: dict[str, Any], backend: Any, user: Any, auth: Any) -> bool:
    # Asked as a read: what a notification reveals is what reading the resource would.
    ctx = RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user, auth=auth,
                         method="resources/read")
    try:
        return bool(await backend.may_notify(visibility, ctx))
    except Exception:
        logger.exception("Checking who may see a change notification failed; not delivering it")
        return False
    finally:
        release_handle(ctx)
