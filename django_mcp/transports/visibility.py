"""
Whether a change notification may reach a stream. A notification about a row says that the row
exists and changed, so each stream delivers it only if its user may read that row now (model
resources tag their notifications with what to check; see ``SiteBackend.may_notify``).
"""

import logging
from typing import Any

from ..protocol.context import RequestContext
from ..protocol.versions import Era
from .requests import release_handle


logger = logging.getLogger("django_mcp.transports")


async def may_deliver(event: dict[str, Any], backend: Any, *, user: Any, auth: Any = None) -> bool:
    """True when ``event`` has no visibility rule, or ``user`` passes it; False if checking fails."""
    visibility = event.get("visibility")
    if not visibility:
        return True
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
