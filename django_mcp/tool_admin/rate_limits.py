"""
Rate limits of the tool admin's rows: calls per user and period, counted in Django's cache
framework (``DJANGO_MCP["RATE_LIMIT_CACHE"]``) in fixed windows, so they hold across workers that
share a cache.
"""

from __future__ import annotations

import math
import time
from typing import Any

from django.core.cache.backends.locmem import LocMemCache

from ..conf import mcp_settings
from ..threads import in_thread


def user_key(user: Any) -> str:
    return f"user:{user.pk}" if user is not None and getattr(user, "is_authenticated", False) else "anonymous"


async def over_limit(site_name: str, tool: str, rate: tuple[int, int], user: Any) -> int | None:
    """Count this call against ``rate`` (calls, seconds); the seconds until the window ends if it is one too many."""
    from django.core.cache import caches

    calls, period = rate
    now = time.time()
    window = int(now // period)
    key = f"django_mcp:ratelimit:{site_name}:{tool}:{user_key(user)}:{period}:{window}"
    cache = caches[mcp_settings.RATE_LIMIT_CACHE]
    if isinstance(cache, LocMemCache):
        # In process memory behind a lock: microseconds, so no thread hop (three hops cost ~1 ms).
        count = _count(cache, key, period)
    else:
        count = await _count_in_thread(cache, key, period)  # network caches block: one hop for both steps
    if count <= calls:
        return None
    return max(1, math.ceil((window + 1) * period - now))


def _count(cache: Any, key: str, period: int) -> int:
    cache.add(key, 0, timeout=period + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: this call opens the window
        cache.set(key, 1, timeout=period + 1)
        return 1


_count_in_thread = in_thread(_count)
