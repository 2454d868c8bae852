"""
What staff decided about each tool in the admin (:class:`~django_mcp.tools.models.McpTool`), as
each worker applies it: enabled or not, overrides, who may use it, rate limits, argument logging.

Each worker keeps a snapshot of a site's rows, read at most every ``TOOL_POLICY_CACHE_SECONDS``.
Saving a row (or changing who has which permission) announces it to every worker over the
channel layer, as session changes are announced (``transports/session_cache.py``), so the next
request everywhere reads the rows again; the snapshot's age bounds how long a lost announcement
can matter. The first snapshot of a process also makes the rows of tools the code defines that
have none yet, and marks rows whose tool left the code as orphaned.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import DatabaseError

from ..conf import mcp_settings
from ..threads import in_thread


if TYPE_CHECKING:
    from ..context import Context


logger = logging.getLogger("django_mcp.tools")

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*(s|sec|second|m|min|minute|h|hour|d|day)s?\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(text: str) -> tuple[int, int] | None:
    """``"10/min"`` → ``(10, 60)``, ``"5/10s"`` → ``(5, 10)``; None for blank. ``ValueError`` if unreadable."""
    if not text or not text.strip():
        return None
    match = _RATE.match(text)
    if match is None:
        raise ValueError(f'Unreadable rate limit {text!r}: write calls/period, e.g. "10/min", "100/hour", "5/10s".')
    calls, multiplier, unit = int(match[1]), int(match[2] or 1), match[3][0].lower()
    return calls, multiplier * _UNIT_SECONDS[unit]


@dataclass(frozen=True)
class ToolPolicy:
    """One tool's row, frozen for use on the event loop."""

    enabled: bool = True
    title: str = ""
    description: str = ""
    annotations: dict[str, Any] | None = None
    permissions: tuple[str, ...] = ()
    group_ids: frozenset[int] = frozenset()
    scopes: frozenset[str] = frozenset()
    rate: tuple[int, int] | None = None
    rate_text: str = ""
    log_arguments: bool = True

    async def allows(self, ctx: Context) -> bool:
        """Whether the request's user may see and call the tool under this row."""
        if not self.enabled:
            return False
        granted = ctx.scopes
        if self.scopes and granted is not None and not self.scopes <= granted:
            return False
        if not self.permissions and not self.group_ids:
            return True
        user = ctx.user
        if user is None or not user.is_authenticated or not user.is_active:
            return False
        return await _user_passes(user, self.permissions, self.group_ids)

    def apply(self, definition: dict[str, Any]) -> dict[str, Any]:
        """The ``tools/list`` entry with the row's title, description and annotation overrides."""
        if not (self.title or self.description or self.annotations):
            return definition
        changed = dict(definition)
        if self.title:
            changed["title"] = self.title
        if self.description:
            changed["description"] = self.description
        if self.annotations:
            changed["annotations"] = {**(definition.get("annotations") or {}), **self.annotations}
        return changed


@in_thread
def _user_passes(user: Any, permissions: tuple[str, ...], group_ids: frozenset[int]) -> bool:
    if permissions and not user.has_perms(permissions):
        return False
    if group_ids and not user.is_superuser:
        return user.groups.filter(pk__in=group_ids).exists()
    return True


def policy_from_row(row: Any) -> ToolPolicy:
    try:
        rate = parse_rate(row.rate_limit)
    except ValueError:
        logger.warning("Tool %s: %s; no limit applied", row.name, row.rate_limit)
        rate = None
    return ToolPolicy(
        enabled=row.enabled and not row.orphaned, title=row.title, description=row.description,
        annotations=row.annotations or None,
        permissions=tuple(f"{p.content_type.app_label}.{p.codename}" for p in row.permissions.all()),
        group_ids=frozenset(group.pk for group in row.groups.all()), scopes=frozenset(row.required_scopes.split()),
        rate=rate, rate_text=row.rate_limit.strip(), log_arguments=row.log_arguments)


def site_name_of(site: Any) -> str:
    return getattr(site, "name", "default")


def sync_tool_rows(site: Any) -> tuple[int, int, int]:
    """
    Rows for the site's tools in code: make the missing ones, mark those whose tool is gone as
    orphaned (never deleted: their settings and call log stay), and bring back returning ones.
    Returns (created, orphaned, revived).
    """
    from .models import McpTool

    site_name = site_name_of(site)
    names = {tool.name for tool in getattr(site, "tools", ())}
    existing = {row.name: row for row in McpTool.objects.filter(site=site_name, source=McpTool.CODE)}
    missing = [McpTool(site=site_name, name=name, source=McpTool.CODE) for name in sorted(names - set(existing))]
    McpTool.objects.bulk_create(missing, ignore_conflicts=True)
    gone = [name for name, row in existing.items() if name not in names and not row.orphaned]
    back = [name for name, row in existing.items() if name in names and row.orphaned]
    if gone:
        McpTool.objects.filter(site=site_name, source=McpTool.CODE, name__in=gone).update(orphaned=True)
    if back:
        McpTool.objects.filter(site=site_name, source=McpTool.CODE, name__in=back).update(orphaned=False)
    return len(missing), len(gone), len(back)


@in_thread
def _load(site: Any, sync: bool) -> dict[str, ToolPolicy]:
    from .models import McpTool

    if sync:
        sync_tool_rows(site)
    rows = McpTool.objects.filter(site=site_name_of(site)).prefetch_related("permissions__content_type", "groups")
    return {row.name: policy_from_row(row) for row in rows}


T = TypeVar("T")


class PolicyCache:
    """
    Per-worker snapshots of what staff decide in the admin: each site's tool rows, and anything
    else read from such rows (the admin-defined query tools, ``tools/query_source.py``). All of
    them are forgotten together when a change of the rows is announced (:meth:`forget`).
    """

    def __init__(self) -> None:
        self.snapshots: dict[Any, tuple[float, Any]] = {}
        self.synced: set[str] = set()
        # One read of a snapshot at a time, whoever asks: without it, every request in flight
        # when a snapshot goes stale queues its own read (benchmarks/tool_admin.py).
        self.reading: dict[Any, asyncio.Future[Any]] = {}
        self.generation = 0

    async def for_site(self, site: Any) -> dict[str, ToolPolicy]:
        if not mcp_settings.TOOL_ADMIN:
            return {}
        name = site_name_of(site)
        return await self.snapshot(name, lambda: self._load_policies(site, name))

    async def snapshot(self, key: Any, load: Callable[[], Awaitable[T]]) -> T:
        """
        What ``load()`` returned, kept under ``key`` until the rows change, and read again once
        older than ``TOOL_POLICY_CACHE_SECONDS``, the safety net for a lost announcement.
        """
        snapshot = self.snapshots.get(key)
        if snapshot is not None:
            if time.monotonic() - snapshot[0] >= mcp_settings.TOOL_POLICY_CACHE_SECONDS:
                # Only the safety net expired: serve what we have while one read refreshes it in
                # the background.
                self._read(key, load)
            return snapshot[1]
        return await asyncio.shield(self._read(key, load))

    def _read(self, key: Any, load: Callable[[], Awaitable[Any]]) -> asyncio.Future[Any]:
        reading = self.reading.get(key)
        if reading is None or reading.get_loop() is not asyncio.get_running_loop():
            reading = self.reading[key] = asyncio.ensure_future(self._load(key, load))
        return reading

    async def _load(self, key: Any, load: Callable[[], Awaitable[Any]]) -> Any:
        # Listen for other workers' announcements before reading, so none is missed in between.
        from ..transports.session_cache import session_cache

        session_cache.bind_to_loop()
        generation = self.generation
        try:
            value = await load()
        finally:
            if self.reading.get(key) is asyncio.current_task():  # not a newer read started after forget()
                self.reading.pop(key, None)  # forget() may run on another thread (an admin save)
        if generation == self.generation:  # an announcement during the read makes it stale already
            self.snapshots[key] = (time.monotonic(), value)
        return value

    async def _load_policies(self, site: Any, name: str) -> dict[str, ToolPolicy]:
        generation = self.generation
        old = self.snapshots.get(name)
        try:
            policies = await _load(site, name not in self.synced)
        except DatabaseError:
            if old is not None:
                # Keep applying what staff decided rather than opening disabled tools to everyone.
                logger.warning("Could not read the tool rows; keeping the last ones read", exc_info=True)
                policies = old[1]
            else:
                # Never read (no table before migrate): tools are served as the code defines them.
                logger.warning("Tool rows unavailable; serving tools as the code defines them", exc_info=True)
                policies = {}
        if generation == self.generation:  # forget() during the read asks for another sync
            self.synced.add(name)
        return policies

    async def get(self, site: Any, name: str) -> ToolPolicy | None:
        return (await self.for_site(site)).get(name)

    def forget(self) -> None:
        # Also sync again: a row deleted in the admin comes back with the code's defaults.
        self.snapshots.clear()
        self.synced.clear()
        self.reading.clear()
        self.generation += 1


policies = PolicyCache()
