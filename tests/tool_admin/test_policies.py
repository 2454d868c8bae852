"""
The tool admin in-process: rows made from the code, what a row changes in listings and calls,
rate limits, the call log, the announcements on save, the admin pages and the commands.
"""

from __future__ import annotations

import asyncio
import threading
from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.cache import cache
from django.core.management import call_command
from django.test import override_settings

from django_mcp.fanout import BROADCAST_GROUP, SESSIONS_GROUP
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era
from django_mcp.sites import McpSite
from django_mcp.call_log.log import call_log
from django_mcp.tool_admin.models import McpTool
from django_mcp.call_log.models import McpToolCall
from django_mcp.tool_admin.policies import parse_rate, policies, sync_tool_rows


pytestmark = pytest.mark.django_db(transaction=True)
ON = {"TOOL_ADMIN": True, "CALL_LOG": True, "TOOL_POLICY_CACHE_SECONDS": 30.0}


@pytest.fixture(autouse=True)
def tool_admin_on():
    with override_settings(DJANGO_MCP=ON):
        policies.forget()
        cache.clear()
        yield
    policies.forget()


def make_site(name: str = "admin-tests") -> McpSite:
    site = McpSite(name)

    @site.tool(annotations={"readOnlyHint": True})
    def echo(text: str, password: str = "") -> str:
        """Say it back."""
        return text

    @site.tool()
    def fail() -> str:
        """Always fails."""
        raise ValueError("nope")

    return site


def ctx(user=None, method: str = "tools/list", auth=None) -> RequestContext:
    return RequestContext(era=Era.MODERN, protocol_version="2026-07-28", method=method, user=user, auth=auth,
                          transport="streamable-http")


async def names(site: McpSite, user=None, auth=None) -> set[str]:
    return {tool["name"] for tool in (await site.list_tools(None, ctx(user, auth=auth))).items}


async def anonymous():
    from django.contrib.auth.models import AnonymousUser

    return AnonymousUser()


def test_parse_rate() -> None:
    assert parse_rate("10/min") == (10, 60) and parse_rate("5/10s") == (5, 10) and parse_rate(" 100 / hour ") == (
        100, 3600)
    assert parse_rate("") is None
    with pytest.raises(ValueError):
        parse_rate("ten a minute")


def test_rows_follow_the_code() -> None:
    site = make_site()
    assert sync_tool_rows(site) == (2, 0, 0)
    assert set(McpTool.objects.values_list("name", flat=True)) == {"echo", "fail"}
    site.remove_tool("fail")
    assert sync_tool_rows(site) == (0, 1, 0)
    assert McpTool.objects.get(name="fail").orphaned
    site.add_tool(lambda: "back", name="fail")
    assert sync_tool_rows(site) == (0, 0, 1)
    out = StringIO()
    call_command("mcp_sync_tools", stdout=out)
    assert "Tool rows:" in out.getvalue()


async def test_a_disabled_tool_is_neither_listed_nor_callable() -> None:
    site, user = make_site(), await anonymous()
    assert await names(site, user) == {"echo", "fail"}  # the first request also made the rows
    await McpTool.objects.filter(name="echo").aupdate(enabled=False)
    policies.forget()
    assert await names(site, user) == {"fail"}
    with pytest.raises(InvalidParams, match="Unknown tool: echo"):
        await site.call_tool("echo", {"text": "x"}, ctx(user, "tools/call"))


async def test_overrides_permissions_groups_and_scopes() -> None:
    site = make_site()
    User = get_user_model()
    alice = await User.objects.acreate_user("alice")
    bob = await User.objects.acreate_user("bob")
    await names(site, alice)
    row = await McpTool.objects.aget(name="echo")
    row.title, row.description, row.annotations = "Echo!", "Repeats text.", {"idempotentHint": True}
    await row.asave()
    perm = await Permission.objects.aget(codename="view_mcptoolcall")
    await sync_to_async(row.permissions.add)(perm)
    policies.forget()
    assert await names(site, alice) == {"fail"}
    await sync_to_async(alice.user_permissions.add)(perm)
    alice = await User.objects.aget(pk=alice.pk)  # a fresh object: Django caches permissions per user object
    policies.forget()
    listed = {tool["name"]: tool for tool in (await site.list_tools(None, ctx(alice))).items}
    assert listed["echo"]["title"] == "Echo!" and listed["echo"]["description"] == "Repeats text."
    assert listed["echo"]["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    # Groups: only members (and superusers) once any group is chosen.
    await sync_to_async(row.permissions.clear)()
    group = await Group.objects.acreate(name="editors")
    await sync_to_async(row.groups.add)(group)
    policies.forget()
    assert "echo" not in await names(site, bob)
    await sync_to_async(bob.groups.add)(group)
    policies.forget()
    assert "echo" in await names(site, bob)
    # Scopes are asked of scoped credentials only.
    row.required_scopes = "library:echo"
    await row.asave()
    policies.forget()

    class Token:
        scope = "mcp:tools"

    assert "echo" not in await names(site, bob, Token())
    assert "echo" in await names(site, bob)


async def test_rate_limit_and_the_call_log() -> None:
    site = make_site()
    User = get_user_model()
    alice = await User.objects.acreate_user("alice")
    await names(site, alice)
    await McpTool.objects.filter(name="echo").aupdate(rate_limit="2/min")
    await McpTool.objects.filter(name="fail").aupdate(log_arguments=False)
    policies.forget()

    class Token:
        scope = "mcp:tools"

        class application:
            name = "Claude"

    call = ctx(alice, "tools/call", Token())
    for _ in range(2):
        assert not (await site.call_tool("echo", {"text": "hi", "password": "hunter2"}, call))["isError"]
    limited = await site.call_tool("echo", {"text": "hi"}, call)
    assert limited["isError"] and "Rate limit reached for tool echo (2/min per user)" in limited["content"][0]["text"]
    assert "Retry in" in limited["content"][0]["text"]
    # Another user has their own allowance.
    bob = await User.objects.acreate_user("bob")
    assert not (await site.call_tool("echo", {"text": "hi"}, ctx(bob, "tools/call")))["isError"]
    assert (await site.call_tool("fail", {}, call))["isError"]
    with pytest.raises(InvalidParams):
        await site.call_tool("echo", {"text": 5, "extra": object()}, call) if False else await site.call_tool(
            "nope", {}, call)
    await call_log.flush()
    rows = [row async for row in McpToolCall.objects.order_by("pk")]
    assert [(row.tool, row.username, row.outcome) for row in rows] == [
        ("echo", "alice", "ok"), ("echo", "alice", "ok"), ("echo", "alice", "rate_limited"), ("echo", "bob", "ok"),
        ("fail", "alice", "tool_error")]
    assert rows[0].arguments == {"text": "hi", "password": "[redacted]"} and rows[0].client == "Claude"
    assert rows[4].arguments is None and rows[4].message  # log_arguments off; the error text kept
    assert rows[0].protocol_version == "2026-07-28" and rows[0].duration_ms >= 0


async def test_a_flush_larger_than_one_statement_saves_every_entry() -> None:
    # A slow database lets the queue grow past BATCH_SIZE; the flush then takes it all, split into
    # statements the backend accepts (72,000 parameters in one would be past SQLite's limit).
    site, call = make_site(), ctx(None, "tools/call")
    for number in range(6000):
        call_log.record(site, "echo", {"text": str(number)}, call, "ok", "", 0.1)
    await call_log.flush()
    assert await McpToolCall.objects.acount() == 6000
    texts = {row.arguments["text"] async for row in McpToolCall.objects.all()}
    assert texts == {str(number) for number in range(6000)}

async def test_a_call_log_writer_left_on_another_loop_stops_and_saves_nothing() -> None:
    """
    A process with two loops (the plain view's own under WSGI, and another): the writer of the
    loop that recorded last saves the entries; the earlier one, waking on its loop's thread, stops.
    """
    site, call = make_site(), ctx(None, "tools/call")
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever, daemon=True)
    thread.start()
    try:
        async def record_there() -> tuple[asyncio.Task, asyncio.Event]:
            call_log.record(site, "echo", {"text": "there"}, call, "ok", "", 0.1)
            return call_log.task, call_log.wakeup

        earlier, earlier_wakeup = asyncio.run_coroutine_threadsafe(record_there(), other).result(5)
        await call_log.flush()
        call_log.record(site, "echo", {"text": "here"}, call, "ok", "", 0.1)  # a writer on this loop now
        assert call_log.task is not earlier and call_log.loop is asyncio.get_running_loop()
        other.call_soon_threadsafe(earlier_wakeup.set)  # as its batch or its timer would wake it
        for _ in range(100):
            if earlier.done():
                break
            await asyncio.sleep(0.02)
        assert earlier.done() and not earlier.cancelled() and earlier.exception() is None
        assert call_log.pending, "the earlier writer saved this loop's entry from its own thread"
        await call_log.flush()
        assert {row.arguments["text"] async for row in McpToolCall.objects.all()} == {"there", "here"}
    finally:
        other.call_soon_threadsafe(other.stop)
        thread.join(5)


async def test_an_entry_that_cannot_be_shaped_costs_only_itself(caplog) -> None:
    site = make_site()
    User = get_user_model()
    alice = await User.objects.acreate_user("alice")

    class BrokenUser:  # a custom authentication's user object whose name cannot be read
        is_authenticated = True

        def __str__(self) -> str:
            raise RuntimeError("no name")

    assert not (await site.call_tool("echo", {"text": "one"}, ctx(BrokenUser(), "tools/call")))["isError"]
    assert not (await site.call_tool("echo", {"text": "two"}, ctx(alice, "tools/call")))["isError"]
    await call_log.flush()
    rows = [row async for row in McpToolCall.objects.order_by("pk")]
    assert [(row.username, row.arguments) for row in rows] == [("alice", {"text": "two"})]
    assert "Could not record a call of echo" in caplog.text


async def test_saving_a_row_is_announced_to_clients_and_forgotten_by_the_worker() -> None:
    # With the in-process layer this worker is every worker: it forgets its snapshot of the rows
    # itself and tells no announcement group. Other workers hearing of it over channels_redis is
    # tests/tool_admin/test_multi_worker.py's (two daphne processes).
    site = make_site()
    await names(site, await anonymous())
    assert policies.snapshots
    layer = get_channel_layer()
    broadcast, sessions = await layer.new_channel(), await layer.new_channel()
    await layer.group_add(BROADCAST_GROUP, broadcast)
    await layer.group_add(SESSIONS_GROUP, sessions)
    row = await McpTool.objects.aget(name="echo")
    row.enabled = False
    await row.asave()
    notified = await asyncio.wait_for(layer.receive(broadcast), 2)
    assert notified["message"]["method"] == "notifications/tools/list_changed"
    assert policies.snapshots == {}
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(sessions), 0.2)


def test_the_admin_switches_tools_and_shows_calls(client) -> None:
    site_rows = sync_tool_rows(make_site("default"))
    assert site_rows[0] == 2
    admin = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(admin)
    page = client.get("/admin/django_mcp_tool_admin/mcptool/").content.decode()
    assert 'name="form-0-enabled"' in page and "echo" in page
    echo = McpTool.objects.get(name="echo")
    client.post("/admin/django_mcp_tool_admin/mcptool/", {"action": "disable_tools", "_selected_action": [echo.pk]})
    assert not McpTool.objects.get(pk=echo.pk).enabled
    response = client.post(f"/admin/django_mcp_tool_admin/mcptool/{echo.pk}/change/", {
        "enabled": "on", "title": "", "description": "", "annotations": "", "required_scopes": "",
        "rate_limit": "lots", "log_arguments": "on"})
    assert response.status_code == 200 and "Unreadable rate limit" in response.content.decode()
    assert client.get("/admin/django_mcp_call_log/mcptoolcall/").status_code == 200
    assert client.get("/admin/django_mcp_tool_admin/mcptool/add/").status_code == 403


async def next_of_kind(layer, channel: str, kind: str) -> dict:
    """
    The next announcement of ``kind`` on ``channel``, passing over others: a site an earlier test
    registered ``Group`` on announces ``resources`` for the new group until it is collected.
    """
    async with asyncio.timeout(2):
        while (event := await layer.receive(channel))["kind"] != kind:
            pass
    return event


async def test_a_change_of_who_has_which_permission_is_announced() -> None:
    alice = await get_user_model().objects.acreate_user("alice")
    layer = get_channel_layer()
    broadcast = await layer.new_channel()
    await layer.group_add(BROADCAST_GROUP, broadcast)
    perm = await Permission.objects.aget(codename="view_mcptoolcall")
    await sync_to_async(alice.user_permissions.add)(perm)
    assert (await next_of_kind(layer, broadcast, "tools"))["message"]["method"] == "notifications/tools/list_changed"
    group = await Group.objects.acreate(name="readers")
    await sync_to_async(group.permissions.add)(perm)
    assert (await next_of_kind(layer, broadcast, "tools"))["message"]["method"] == "notifications/tools/list_changed"


def test_old_calls_are_pruned() -> None:
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    for age in (1, 200):
        McpToolCall.objects.create(tool="echo", outcome="ok", duration_ms=1, created=now - timedelta(days=age))
    out = StringIO()
    call_command("mcp_clearsessions", stdout=out)
    assert "1 old tool calls" in out.getvalue()
    assert McpToolCall.objects.count() == 1
