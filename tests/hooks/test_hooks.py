"""
The seam around listing and calling (django_mcp/hooks.py, django_mcp/calls.py) and the signals
observers use (django_mcp/signals.py), used the way a third-party app would use them.
"""

import asyncio
from typing import Any

import pytest
from django.core.management import call_command

from django_mcp import hooks
from django_mcp.hooks import Hook, HookChains, ToolCall, register_hook, unregister_hook
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era
from django_mcp.signals import clearing_expired, tool_called
from django_mcp.sites import McpSite


pytestmark = pytest.mark.django_db


def ctx() -> RequestContext:
    return RequestContext(era=Era.MODERN, protocol_version="2026-07-28", method="tools/call")


def make_site() -> McpSite:
    site = McpSite("hooks")

    @site.tool()
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    @site.tool()
    async def beta_feature() -> str:
        return "beta"

    @site.prompt()
    def beta_prompt() -> str:
        return "hello"

    return site


class BetaTools(Hook):
    """Hides every primitive named beta_*, but only tools (kinds), and renames echo's title."""

    kinds = {"tool"}

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def allows(self, site, primitive, ctx):
        self.asked.append(primitive.key)
        return not primitive.key.startswith("beta_")

    async def definition(self, site, primitive, definition, ctx):
        return {**definition, "title": f"{primitive.key} on {site.name}"}


class Recording(Hook):
    """Around each call: records the order of hooks, and may refuse."""

    def __init__(self, name: str, log: list[str], refuse: bool = False) -> None:
        self.name, self.log, self.refuse = name, log, refuse

    async def call(self, call, call_next):
        self.log.append(f"{self.name} in")
        if self.refuse:
            call.outcome = "refused"
            return {"content": [{"type": "text", "text": f"{self.name} says no"}], "isError": True}
        result = await call_next(call)
        self.log.append(f"{self.name} out")
        return result


async def test_a_hook_hides_and_renames_only_the_kinds_it_names():
    site, hook = make_site(), BetaTools()
    site.add_hook(hook)
    page = await site.list_tools(None, ctx())
    assert [(item["name"], item["title"]) for item in page.items] == [("echo", "echo on hooks")]
    assert (await site.list_prompts(None, ctx())).items[0]["name"] == "beta_prompt"  # prompts untouched
    with pytest.raises(InvalidParams, match="Unknown tool"):
        await site.call_tool("beta_feature", {}, ctx())  # refused exactly like a tool that does not exist


async def test_call_hooks_run_outermost_first_and_may_answer_themselves():
    site, log = make_site(), []
    site.add_hook(Recording("outer", log))
    site.add_hook(Recording("inner", log))
    result = await site.call_tool("echo", {"text": "hi"}, ctx())
    assert result["content"][0]["text"] == "hi"
    assert log == ["outer in", "inner in", "inner out", "outer out"]

    refusing, log = make_site(), []
    refusing.add_hook(Recording("gate", log, refuse=True))
    refusing.add_hook(Recording("never", log))
    result = await refusing.call_tool("echo", {"text": "hi"}, ctx())
    assert result["isError"] and result["content"][0]["text"] == "gate says no"
    assert log == ["gate in"]


async def test_hooks_installed_for_every_site_come_first_and_can_be_removed():
    log: list[str] = []
    site = make_site()
    site.add_hook(Recording("site", log))
    everywhere = register_hook(Recording("global", log))
    try:
        await site.call_tool("echo", {"text": "x"}, ctx())
        assert log[:2] == ["global in", "site in"]
    finally:
        unregister_hook(everywhere)
    log.clear()
    await site.call_tool("echo", {"text": "x"}, ctx())
    assert log == ["site in", "site out"]


def test_a_hook_is_asked_only_the_questions_it_overrides():
    chains = HookChains([BetaTools(), Recording("r", [])])
    assert [type(h) for h in chains.allows("tool")] == [BetaTools]
    assert chains.allows("prompt") == ()  # BetaTools names tools only; Recording overrides no allows()
    assert [type(h) for h in chains.calls] == [Recording]
    assert not Hook().overrides("allows")


def test_only_hooks_may_be_installed():
    with pytest.raises(TypeError):
        register_hook(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        McpSite("x").add_hook(lambda: None)  # type: ignore[arg-type]


async def test_tool_called_reports_every_outcome():
    site, seen = make_site(), []

    @site.tool()
    async def slow() -> str:
        await asyncio.sleep(10)
        return "late"

    def observe(sender: Any, call: ToolCall, outcome: str, message: str, duration_ms: float, **kwargs: Any) -> None:
        seen.append((sender, call.tool.name, call.arguments, outcome, message, duration_ms >= 0))

    site.add_hook(Recording("gate", [], refuse=False))
    tool_called.connect(observe)
    try:
        await site.call_tool("echo", {"text": "ok"}, ctx())
        await site.call_tool("echo", {}, ctx())  # a missing argument: a tool error the model can read
        task = asyncio.ensure_future(site.call_tool("slow", {}, ctx()))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        tool_called.disconnect(observe)
    assert [(entry[1], entry[3]) for entry in seen] == [("echo", "ok"), ("echo", "tool_error"), ("slow", "cancelled")]
    assert seen[0][0] is site and seen[0][2] == {"text": "ok"} and seen[0][4] == ""
    assert "text" in seen[1][4] and all(entry[5] for entry in seen)


async def test_an_outcome_a_hook_sets_reaches_observers():
    site, seen = make_site(), []
    site.add_hook(Recording("gate", [], refuse=True))

    def observe(sender: Any, call: ToolCall, outcome: str, **kwargs: Any) -> None:
        seen.append(outcome)

    tool_called.connect(observe)
    try:
        await site.call_tool("echo", {"text": "x"}, ctx())
    finally:
        tool_called.disconnect(observe)
    assert seen == ["refused"]


async def test_an_observer_that_fails_costs_the_caller_nothing(caplog):
    site = make_site()

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("observer bug")

    tool_called.connect(broken)
    try:
        result = await site.call_tool("echo", {"text": "still here"}, ctx())
    finally:
        tool_called.disconnect(broken)
    assert result["content"][0]["text"] == "still here"
    assert "An observer of tool_called failed" in caplog.text


def test_without_hooks_or_observers_a_call_skips_the_seam(monkeypatch):
    # The site's own chains are empty, and the suite's installed hooks (the tool admin) removed:
    # call_tool runs the tool directly, without making a ToolCall.
    monkeypatch.setattr(hooks, "_installed", [])
    monkeypatch.setattr(hooks, "generation", hooks.generation + 1)
    monkeypatch.setattr(tool_called, "receivers", [])
    made: list[Any] = []
    monkeypatch.setattr("django_mcp.calls.ToolCall", lambda *args: made.append(args))
    result = asyncio.run(make_site().call_tool("echo", {"text": "direct"}, ctx()))
    assert result["content"][0]["text"] == "direct" and made == []


def test_mcp_clearsessions_asks_every_app_what_it_removed(capsys):
    def receiver(sender: Any, **kwargs: Any) -> str:
        return "3 old widgets"

    clearing_expired.connect(receiver)
    try:
        call_command("mcp_clearsessions")
    finally:
        clearing_expired.disconnect(receiver)
    output = capsys.readouterr().out
    assert output.startswith("Removed ") and "expired sessions" in output and "old tool calls" in output
    assert output.rstrip().endswith("and 3 old widgets.")
