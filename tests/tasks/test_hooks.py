"""
Which ``tools/call`` becomes a task (django_mcp/tasks/hooks.py), in process on a site of this
module's own: the listing's ``execution.taskSupport`` per revision, the TTL a task gets, the row a
task is made with (owner, session, scopes, revision, capabilities), the per-user limit, and the
refusals of each revision.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser

from django_mcp import McpSite
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams, MethodNotFound, MissingClientCapability
from django_mcp.protocol.versions import Era
from django_mcp.tasks import hooks
from django_mcp.tasks.models import McpTask

pytestmark = pytest.mark.django_db(transaction=True)

SITE = McpSite("tasks-hook-tests")
EXT = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


@SITE.tool(name="may", task_support="optional")
async def may(text: str = "") -> str:
    """Optional task."""
    return f"may {text}"


@SITE.tool(name="must", task_support="required")
async def must() -> str:
    """Required task."""
    return "must"


@SITE.tool(name="never")
async def never() -> str:
    """No task support."""
    return "never"


def context(version: str, *, capabilities: dict | None = None, params: dict | None = None, user=None,
            auth=None, session: str | None = None) -> RequestContext:
    modern = version >= "2026-07-28"
    return RequestContext(era=Era.MODERN if modern else Era.LEGACY, protocol_version=version,
                          client_capabilities=capabilities or {}, user=user or AnonymousUser(), auth=auth,
                          session=SimpleNamespace(id=session) if session else None, method="tools/call",
                          params=params)


async def listing(version: str) -> dict[str, dict]:
    page = await SITE.list_tools(None, context(version))
    return {tool["name"]: tool for tool in page.items}


async def test_the_listing_says_task_support_in_2025_11_25_only():
    tools = await listing("2025-11-25")
    assert tools["may"]["execution"] == {"taskSupport": "optional"}
    assert tools["must"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["never"]
    for version in ("2025-06-18", "2026-07-28"):
        assert [name for name, tool in (await listing(version)).items() if "execution" in tool] == [], version


@pytest.mark.parametrize(("requested", "limit", "expected"), [
    (None, 3_600_000, 3_600_000), (5000, 3_600_000, 5000), (10**12, 3_600_000, 3_600_000), (0, 3_600_000, 3_600_000),
    (-5, 3_600_000, 3_600_000), ("5000", 3_600_000, 3_600_000), (5000, None, 5000), (None, None, None)])
def test_the_ttl_is_the_clients_when_shorter_than_the_servers(settings, requested, limit, expected):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "TASK_TTL_MS": limit}
    assert hooks._ttl(requested) == expected


async def wait_ended(task_id: str) -> McpTask:
    deadline = time.monotonic() + 3
    while True:
        row = await McpTask.objects.aget(pk=task_id)
        if row.is_terminal:
            return row
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)


async def test_a_2026_call_declaring_the_extension_makes_a_task_row(django_user_model):
    user = await django_user_model.objects.acreate(username="hook-user")
    auth = SimpleNamespace(scopes=frozenset({"mcp:write", "mcp:read"}), application=SimpleNamespace(client_id="app-9"))
    ctx = context("2026-07-28", capabilities={**EXT, "elicitation": {}}, user=user, auth=auth)
    created = await SITE.call_tool("may", {"text": "x"}, ctx)
    assert created["resultType"] == "task" and created["status"] == "working"
    row = await McpTask.objects.aget(pk=created["taskId"])
    assert (row.owner, row.username, row.client, row.session) == (f"user:{user.pk}", "hook-user", "app-9", "")
    assert row.scopes == ["mcp:read", "mcp:write"]
    assert row.protocol_version == "2026-07-28" and row.client_capabilities == {**EXT, "elicitation": {}}
    assert row.site == SITE.name and row.tool == "may" and row.arguments == {"text": "x"}
    assert row.ttl_ms == 3_600_000 and row.expires is not None
    done = await wait_ended(row.id)
    assert done.status == McpTask.COMPLETED and done.result["content"][0]["text"] == "may x"


async def test_a_2025_task_augmented_call_makes_a_task_of_the_session():
    ctx = context("2025-11-25", params={"name": "may", "arguments": {}, "task": {"ttl": 1000}}, session="sess-1")
    created = await SITE.call_tool("may", {}, ctx)
    assert set(created) == {"task"} and created["task"]["ttl"] == 1000
    row = await McpTask.objects.aget(pk=created["task"]["taskId"])
    assert (row.owner, row.session, row.ttl_ms) == ("anonymous", "sess-1", 1000)
    await wait_ended(row.id)


async def test_calls_that_make_no_task():
    # 2026 without the extension: an optional tool runs at once, a required one is refused.
    plain = await SITE.call_tool("may", {}, context("2026-07-28"))
    assert plain["content"][0]["text"] == "may "
    with pytest.raises(MissingClientCapability):
        await SITE.call_tool("must", {}, context("2026-07-28"))
    # A tool without support never makes a task, whatever the request.
    assert (await SITE.call_tool("never", {}, context("2026-07-28", capabilities=EXT)))["content"][0]["text"] == "never"
    # 2025-11-25: the task param is the opt-in.
    with pytest.raises(MethodNotFound):
        await SITE.call_tool("must", {}, context("2025-11-25", params={"name": "must"}))
    with pytest.raises(MethodNotFound):
        await SITE.call_tool("never", {}, context("2025-11-25", params={"name": "never", "task": {}}))
    # Before 2025-11-25 there are no tasks: the param means nothing.
    older = await SITE.call_tool("may", {}, context("2025-06-18", params={"name": "may", "task": {}}))
    assert older["content"][0]["text"] == "may "
    assert await McpTask.objects.acount() == 0


async def test_the_per_user_limit_counts_working_tasks(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "MAX_TASKS_PER_USER": 1}
    await McpTask.objects.acreate(id="busy", tool="may", owner="anonymous", protocol_version="2026-07-28",
                                  created=_now(), last_updated=_now())
    with pytest.raises(InvalidParams, match="Too many tasks"):
        await SITE.call_tool("may", {}, context("2026-07-28", capabilities=EXT))
    assert await McpTask.objects.acount() == 1
    await McpTask.objects.filter(pk="busy").aupdate(status=McpTask.COMPLETED)
    created = await SITE.call_tool("may", {}, context("2026-07-28", capabilities=EXT))
    await wait_ended(created["taskId"])
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "MAX_TASKS_PER_USER": None}
    for _ in range(3):
        await wait_ended((await SITE.call_tool("may", {}, context("2026-07-28", capabilities=EXT)))["taskId"])


def _now():
    from django.utils import timezone

    return timezone.now()
