"""
What staff decided about each tool in the admin (:class:`~django_mcp.tool_admin.models.McpTool`), as
each worker applies it: enabled or not, overrides, who may use it, rate limits, argument logging.

Each worker keeps a snapshot of a site's rows (:mod:`django_mcp.snapshots`), read at most every
``TOOL_POLICY_CACHE_SECONDS``. Saving a row (or changing who has which permission) announces it to
every worker over the channel layer, so the next request everywhere reads the rows again; the
snapshot's age bounds how long a lost announcement can matter. The first snapshot of a process
also makes the rows of tools the code defines that have none yet, and marks rows whose tool left
the code as orphaned. :class:`ToolAdminHook` applies the rows through the core's hooks
(:mod:`django_mcp.hooks`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError

from ..conf import mcp_settings
from ..hooks import CallNext, Hook, ToolCall, register_hook, unregister_hook
from ..snapshots import snapshots
from ..threads import in_thread
from ..tools.results import error_result
from .rate_limits import over_limit


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




class ToolPolicies:
    """
    Each site's tool rows as :class:`ToolPolicy` objects, kept in the row snapshots
    (:mod:`django_mcp.snapshots`) and read again when a change of the rows is announced. The
    first read after each announcement also syncs the rows with the tools in code.
    """

    def __init__(self) -> None:
        self.synced: set[str] = set()
        self._synced_generation = snapshots.generation

    async def for_site(self, site: Any) -> dict[str, ToolPolicy]:
        if not mcp_settings.TOOL_ADMIN:
            return {}
        name = site_name_of(site)
        return await snapshots.snapshot(("tool rows", name), lambda: self._load_policies(site, name))

    async def _load_policies(self, site: Any, name: str) -> dict[str, ToolPolicy]:
        generation = snapshots.generation
        if self._synced_generation != generation:
            # The rows changed since the last sync (a row deleted in the admin comes back with the
            # code's defaults): sync again.
            self.synced.clear()
            self._synced_generation = generation
        old = snapshots.last(("tool rows", name))
        try:
            policies = await _load(site, name not in self.synced)
        except DatabaseError:
            if old is not None:
                # Keep applying what staff decided rather than opening disabled tools to everyone.
                logger.warning("Could not read the tool rows; keeping the last ones read", exc_info=True)
                policies = old
            else:
                # Never read (no table before migrate): tools are served as the code defines them.
                logger.warning("Tool rows unavailable; serving tools as the code defines them", exc_info=True)
                policies = {}
        if generation == snapshots.generation:  # a forget() during the read asks for another sync
            self.synced.add(name)
        return policies

    async def get(self, site: Any, name: str) -> ToolPolicy | None:
        return (await self.for_site(site)).get(name)

    @property
    def snapshots(self) -> dict[Any, Any]:
        """The rows each site last read (tests look at them)."""
        return {key: value for key, value in snapshots.snapshots.items() if key[0] == "tool rows"}

    def forget(self) -> None:
        """Every worker-local snapshot read again, and the rows synced, on the next request."""
        snapshots.forget()


policies = ToolPolicies()


def switch_tool_admin(on: bool) -> None:
    """
    Install :data:`tool_admin_hook` for every site while ``DJANGO_MCP["TOOL_ADMIN"]`` is on, and
    uninstall it while it is off (followed by ``apps.ready``: :func:`~django_mcp.conf.follow_setting`).
    """
    if on:
        register_hook(tool_admin_hook)
    else:
        unregister_hook(tool_admin_hook)


class ToolAdminHook(Hook):
    """
    The tool admin's rows applied through the core's hooks (:mod:`django_mcp.hooks`): a tool whose
    row is disabled, or whose permissions, groups or scopes the user lacks, is hidden and refused;
    the row's title, description and annotations replace the tool's in listings; a call over the
    row's rate limit gets an ``isError`` result that says when to retry (MCP spec 2025-11-25,
    server/tools, "Error Handling"); and a row that does not log arguments keeps them from
    observers such as the call log.
    """

    kinds = frozenset({"tool"})

    async def allows(self, site: Any, primitive: Any, ctx: Context) -> bool:
        policy = await policies.get(site, primitive.key)
        return policy is None or await policy.allows(ctx)

    async def definition(self, site: Any, primitive: Any, definition: dict[str, Any], ctx: Context) -> dict[str, Any]:
        policy = await policies.get(site, primitive.key)
        return definition if policy is None else policy.apply(definition)

    async def call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        policy = await policies.get(call.site, call.tool.key)
        if policy is None:
            return await call_next(call)
        call.record_arguments = policy.log_arguments
        if policy.rate is not None:
            retry = await over_limit(site_name_of(call.site), call.tool.name, policy.rate, call.request.user)
            if retry is not None:
                call.outcome = "rate_limited"
                return error_result(f"Rate limit reached for tool {call.tool.name} ({policy.rate_text} per user). "
                                    f"Retry in {retry} seconds.")
        return await call_next(call)


#: The hook :func:`switch_tool_admin` installs.
tool_admin_hook = ToolAdminHook()
