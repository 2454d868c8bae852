"""
The points around every method (django_mcp/hooks/): each reached through the real ASGI
application with the test client, as a project's hook would be — seeing the operation after the
permission checks, going on with ``call_next`` or answering itself, in the order hooks were
installed, filtered by ``kinds``, and never asked (nor an operation made) where no hook is around.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from django_mcp.context import Context
from django_mcp.hooks import Hook, register_hook, unregister_hook
from django_mcp.protocol.backend import Page
from django_mcp.protocol.errors import InvalidParams
from django_mcp.sites import McpSite
from django_mcp.test import ErrorResponse, McpClient


pytestmark = pytest.mark.django_db(transaction=True)

LEGACY, MODERN = "2025-11-25", "2026-07-28"


def make_site(name: str = "points") -> McpSite:
    site = McpSite(name)

    @site.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @site.tool()
    async def ask_colour(ctx: Context) -> str:
        """Asks the user for a colour."""
        answer = await ctx.elicit("Your colour?", {"type": "object", "properties": {"colour": {"type": "string"}}},
                                  key="colour")
        return f"{answer.content['colour']}!"

    @site.resource("report://slow")
    def slow_report() -> str:
        slow_report.reads += 1
        return f"report #{slow_report.reads}"

    slow_report.reads = 0

    @site.resource("tenant://a/notes")
    def tenant_a() -> str:
        return "a's notes"

    @site.resource("tenant://b/notes")
    def tenant_b() -> str:
        return "b's notes"

    @site.resource("item://{item_id}")
    def item(item_id: str) -> str:
        return f"item {item_id}"

    @site.prompt(complete={"style": ["brief", "bold", "baroque"]})
    def write(topic: str, style: str = "brief") -> str:
        return f"Write a {style} text on {topic}."

    return site


class Around(Hook):
    """Records every operation it is around, by point, and passes it on."""

    def __init__(self, log: list[str], name: str = "") -> None:
        self.log, self.name = log, name

    async def request(self, request, call_next):
        self.log.append(f"{self.name}request {request.method}")
        return await call_next(request)

    async def notification(self, notification, call_next):
        self.log.append(f"{self.name}notification {notification.method}")
        await call_next(notification)

    async def call(self, call, call_next):
        self.log.append(f"{self.name}call {call.tool.name}")
        return await call_next(call)

    async def read(self, read, call_next):
        self.log.append(f"{self.name}read {read.uri} {read.kind} {read.variables}")
        return await call_next(read)

    async def get_prompt(self, get, call_next):
        self.log.append(f"{self.name}get_prompt {get.prompt.name} {get.arguments}")
        return await call_next(get)

    async def complete(self, completion, call_next):
        self.log.append(f"{self.name}complete {completion.target.key} {completion.argument['name']}")
        return await call_next(completion)

    async def list(self, listing, call_next):
        self.log.append(f"{self.name}list {listing.kind}")
        return await call_next(listing)

    async def subscribe(self, subscription, call_next):
        self.log.append(f"{self.name}subscribe {subscription.uri}")
        await call_next(subscription)

    async def listen(self, listen, call_next):
        self.log.append(f"{self.name}listen {sorted(listen.requested)}")
        return await call_next(listen)

    async def ask(self, question, call_next):
        self.log.append(f"{self.name}ask {question.method}")
        return await call_next(question)


def test_every_method_passes_through_its_point_inside_the_request_point():
    site, log = make_site(), []
    site.add_hook(Around(log))
    client = McpClient(LEGACY, site=site, elicitation={"action": "accept", "content": {"colour": "teal"}})
    client.list_tools()
    assert client.call_tool("ask_colour").text == "teal!"
    client.read_resource("item://7")
    client.get_prompt("write", topic="bees")
    client.complete("write", "style", "b")
    client.subscribe("report://slow")
    client.ping()
    client.close()
    assert log == [
        "request initialize", "notification notifications/initialized",
        "request tools/list", "list tool",
        "request tools/call", "call ask_colour", "ask elicitation/create",
        "request resources/read", "read item://7 resource_template {'item_id': '7'}",
        "request prompts/get", "get_prompt write {'topic': 'bees'}",
        "request completion/complete", "complete write style",
        "request resources/subscribe", "subscribe report://slow",
        "request ping",
    ]


async def test_the_listen_filter_and_a_modern_notification_pass_through_their_points():
    site, log = make_site(), []
    site.add_hook(Around(log))
    client = McpClient(MODERN, site=site)
    async with client.listen(tools=True, uris=["report://slow"]) as stream:
        assert stream.acknowledged == {"toolsListChanged": True, "resourceSubscriptions": ["report://slow"]}
    assert "listen ['resourceSubscriptions', 'toolsListChanged']" in log
    assert "request subscriptions/listen" in log


def test_hooks_installed_for_every_site_come_first_then_the_sites_own():
    site, log = make_site(), []
    site.add_hook(Around(log, "site "))
    everywhere = register_hook(Around(log, "global "))
    try:
        McpClient(MODERN, site=site).read_resource("report://slow")
    finally:
        unregister_hook(everywhere)
    assert log == ["global request resources/read", "site request resources/read",
                   "global read report://slow resource {}", "site read report://slow resource {}"]


def test_a_read_hook_answers_from_its_cache():
    class CachedReports(Hook):
        kinds = {"resource"}

        def __init__(self) -> None:
            self.cache: dict[str, Any] = {}

        async def read(self, read, call_next):
            if read.uri not in self.cache:
                self.cache[read.uri] = await call_next(read)
            return self.cache[read.uri]

    site = make_site()
    site.add_hook(CachedReports())
    client = McpClient(MODERN, site=site)
    assert [client.read_resource("report://slow").text for _ in range(3)] == ["report #1"] * 3
    # kinds={"resource"}: a template's reads are not its business.
    assert [client.read_resource("item://1").text for _ in range(2)] == ["item 1", "item 1"]


def test_a_listing_hook_filters_by_tenant_and_a_read_hook_refuses_the_other_tenants():
    class Tenant(Hook):
        kinds = {"resource"}

        async def list(self, listing, call_next):
            page = await call_next(listing)
            return Page([item for item in page.items if not item["uri"].startswith("tenant://b/")], page.next_cursor)

        async def read(self, read, call_next):
            if read.uri.startswith("tenant://b/"):
                raise InvalidParams("No such resource in your tenant")
            return await call_next(read)

    site = make_site()
    site.add_hook(Tenant())
    client = McpClient(MODERN, site=site)
    assert "tenant://a/notes" in client.list_resources().uris
    assert "tenant://b/notes" not in client.list_resources().uris
    assert "item://{item_id}" in client.list_resource_templates().uris  # another kind: not asked
    with pytest.raises(ErrorResponse) as refused:
        client.read_resource("tenant://b/notes")
    assert refused.value.code == -32602 and "tenant" in refused.value.message


def test_prompt_completion_and_subscription_hooks_may_answer_or_refuse():
    class Shaping(Hook):
        async def get_prompt(self, get, call_next):
            result = await call_next(get)
            return {**result, "description": "shaped"}

        async def complete(self, completion, call_next):
            result = await call_next(completion)
            return {**result, "values": [value for value in result["values"] if value != "baroque"],
                    "total": len(result["values"]) - 1}

        async def subscribe(self, subscription, call_next):
            if subscription.uri.startswith("tenant://"):
                raise InvalidParams("Subscriptions to tenant notes are not offered")
            await call_next(subscription)

    site = make_site()
    site.add_hook(Shaping())
    client = McpClient(LEGACY, site=site)
    assert client.get_prompt("write", topic="x").description == "shaped"
    assert client.complete("write", "style", "b").values == ["brief", "bold"]
    client.subscribe("report://slow")
    with pytest.raises(ErrorResponse) as refused:
        client.subscribe("tenant://a/notes")
    assert "not offered" in refused.value.message
    with pytest.raises(ErrorResponse):
        client.subscribe("nothing://here")  # unknown before any hook is asked
    client.close()


def test_a_request_hook_may_refuse_any_method_or_change_its_params():
    class Gate(Hook):
        async def request(self, request, call_next):
            if request.method == "prompts/list":
                raise InvalidParams("Prompts are closed today")
            if request.method == "tools/call" and request.params["name"] == "echo":
                request.params = {**request.params, "arguments": {"text": "rewritten"}}
            return await call_next(request)

    site = make_site()
    site.add_hook(Gate())
    for version in (MODERN, LEGACY):
        client = McpClient(version, site=site)
        assert client.call_tool("echo", text="original").text == "rewritten"
        with pytest.raises(ErrorResponse) as refused:
            client.list_prompts()
        assert refused.value.message.endswith("Prompts are closed today")
        client.close()


def test_a_failing_notification_hook_is_logged_and_the_session_goes_on(caplog):
    class Broken(Hook):
        async def notification(self, notification, call_next):
            raise RuntimeError("a bug in the hook")

    site = make_site()
    site.add_hook(Broken())
    client = McpClient(LEGACY, site=site)
    assert client.call_tool("echo", text="still here").text == "still here"
    client.close()
    assert "Handling the notification notifications/initialized failed" in caplog.text


def test_an_ask_hook_adds_to_the_questions_meta():
    class Tagging(Hook):
        async def ask(self, question, call_next):
            question.params = {**(question.params or {}), "_meta": {"example.com/asked-by": "hooks"}}
            answer = await call_next(question)
            assert answer["action"] == "accept"
            return answer

    site = make_site()
    site.add_hook(Tagging())
    client = McpClient(LEGACY, site=site, elicitation={"action": "accept", "content": {"colour": "red"}})
    assert client.call_tool("ask_colour").text == "red!"
    client.close()
    assert client.answers.asked[0][1]["_meta"] == {"example.com/asked-by": "hooks"}


def test_a_point_no_hook_is_around_makes_no_operation(monkeypatch):
    made: list[Any] = []
    for name in ("ResourceRead", "PromptGet", "Listing", "CompletionRequest", "Subscription"):
        monkeypatch.setattr(f"django_mcp.backend.{name}", lambda *args, _name=name: made.append(_name))
    site = make_site()
    site.add_hook(Hook())  # a hook that overrides nothing is asked nothing
    client = McpClient(LEGACY, site=site)
    client.list_tools()
    client.read_resource("report://slow")
    client.get_prompt("write", topic="x")
    client.close()
    assert made == []


def test_kinds_filter_the_points_about_primitives_not_those_about_messages():
    log: list[str] = []

    class ToolsOnly(Around):
        kinds = {"tool"}

    site = make_site()
    site.add_hook(ToolsOnly(log))
    client = McpClient(MODERN, site=site)
    client.list_tools()
    client.list_prompts()
    client.read_resource("report://slow")
    assert log == ["request tools/list", "list tool", "request prompts/list", "request resources/read"]


def test_a_hook_is_asked_only_around_what_it_overrides():
    from django_mcp.hooks import HookChains

    class OnlyReads(Hook):
        async def read(self, read, call_next):
            return await call_next(read)

    chains = HookChains([OnlyReads(), Hook()])
    assert [type(hook) for hook in chains.around("read", "resource")] == [OnlyReads]
    for point in ("request", "notification", "call", "get_prompt", "complete", "list", "subscribe", "listen", "ask"):
        assert chains.around(point, "resource") == ()


def test_a_hook_answers_a_call_without_the_tool():
    class Canned(Hook):
        async def call(self, call, call_next):
            await asyncio.sleep(0)
            return {"content": [{"type": "text", "text": f"canned for {call.tool.name}"}]}

    site = make_site()
    site.add_hook(Canned())
    assert McpClient(MODERN, site=site).call_tool("echo", text="x").text == "canned for echo"


async def test_what_the_hooks_add_to_a_deferred_task_reaches_the_hooks_around_its_run():
    # Async, one event loop throughout: a task made in process runs on the loop of the call that
    # made it, which the sync client's per-call loop would close under it.
    seen: list[Any] = []

    class Carrying(Hook):
        async def defer(self, deferral, call_next):
            deferral.carrier["example.com/origin"] = f"{deferral.method} {deferral.target}"
            await call_next(deferral)

        async def run_deferred(self, run, call_next):
            seen.append((run.key, run.target, run.carrier.get("example.com/origin")))
            await call_next(run)

    carrying = register_hook(Carrying())
    try:
        client = McpClient(LEGACY)
        created = await client.arequest("tools/call", {"name": "durable_pid", "arguments": {},
                                                       "task": {"ttl": 60000}})
        task_id = created["task"]["taskId"]
        result = await client.arequest("tasks/result", {"taskId": task_id})
        await client.aclose()
    finally:
        unregister_hook(carrying)
    assert result["content"][0]["text"].startswith("ran in pid")
    assert seen == [(task_id, "durable_pid", "tools/call durable_pid")]


def test_a_hook_with_nothing_to_do_yet_is_left_out_until_it_has(monkeypatch):
    monkeypatch.setattr("django_mcp.hooks.chains.RECHECK_SECONDS", 0.0)  # asked again on every request
    class Waiting(Around):
        ready = False

        def active(self) -> bool:
            return self.ready

    site, log = make_site(), []
    waiting = site.add_hook(Waiting(log))
    client = McpClient(MODERN, site=site)
    client.list_tools()
    assert log == [] and waiting not in site.hook_chains().hooks and waiting in site.hook_chains().dormant
    waiting.ready = True  # the site notices on its next request, and makes its chains again
    client.list_tools()
    assert log == ["request tools/list", "list tool"] and waiting in site.hook_chains().hooks
