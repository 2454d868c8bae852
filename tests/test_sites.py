"""The registry: registration, duplicates, permissions, capabilities (``McpSite`` as the Backend)."""

from typing import Any

import pytest

from django_mcp import decorators, sites
from django_mcp.tools import Tool
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.errors import InvalidParams, ResourceNotFound
from django_mcp.protocol.versions import Era
from django_mcp.sites import AlreadyRegistered, McpSite, NotRegistered
from django_mcp.request_state import SignedStateCodec


# Sync callables run through database_sync_to_async, which checks the thread's DB connections.
pytestmark = pytest.mark.django_db


class StubUser:
    is_authenticated = True
    pk = 1

    def __init__(self, *perms: str) -> None:
        self.perms = set(perms)

    def has_perm(self, perm: str, obj: Any = None) -> bool:
        return perm in self.perms

    def has_perms(self, perms: Any, obj: Any = None) -> bool:
        return all(self.has_perm(perm, obj) for perm in perms)


def ctx(user: Any = None) -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user)


def test_sites_are_independent():
    one, two = McpSite(), McpSite()

    @one.tool()
    def f() -> str:
        return ""

    assert [t.name for t in one.tools] == ["f"]
    assert two.tools == []
    assert all(tool.function is not f for tool in sites.site.tools)


def test_a_later_site_under_the_default_name_does_not_stand_in_for_the_default():
    shadow = McpSite()  # named "default", alive while this test holds it
    listed = sites.all_sites()
    assert listed[0] is sites.get_default_site()
    assert shadow not in listed
    assert sites.site_named("default") is sites.get_default_site()
    named = McpSite("catalogue-of-this-test")
    assert named in sites.all_sites()


def test_decorators_return_the_function_unchanged():
    site = McpSite()

    def original(a: int = 0) -> int:
        return a

    assert site.tool(name="renamed")(original) is original
    assert site.get_tool("renamed").function is original
    assert site.prompt()(original) is original
    assert site.resource("x://1")(original) is original


@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_duplicate_names_are_refused(kind):
    site = McpSite()

    def f() -> str:
        return ""

    getattr(site, kind)()(f)
    with pytest.raises(AlreadyRegistered) as info:
        getattr(site, kind)()(f)
    assert "'f'" in str(info.value)
    # Another name is fine.
    getattr(site, kind)(name="g")(f)


@pytest.mark.parametrize("uri", ["x://1", "x://{id}"])
def test_duplicate_resources_are_refused(uri):
    site = McpSite()

    def f(id: str = "") -> str:
        return ""

    site.add_resource(f, uri)
    with pytest.raises(AlreadyRegistered):
        site.add_resource(f, uri)


def test_already_registered_is_an_improperly_configured():
    from django.core.exceptions import ImproperlyConfigured

    assert issubclass(AlreadyRegistered, ImproperlyConfigured)


def test_bare_decorators_raise_type_error():
    site = McpSite()

    def f() -> str:
        return ""

    with pytest.raises(TypeError, match=r"@tool\(\)"):
        site.tool(f)
    with pytest.raises(TypeError, match=r"@prompt\(\)"):
        site.prompt(f)
    with pytest.raises(TypeError):
        site.resource(f)
    assert site.tools == [] and site.prompts == [] and site.resources == []


def test_module_level_bare_tool_raises_and_registers_nothing():
    def never_registered_tool() -> str:
        return ""

    with pytest.raises(TypeError):
        decorators.tool(never_registered_tool)
    with pytest.raises(TypeError):
        decorators.prompt(never_registered_tool)
    assert sites.site.get_tool("never_registered_tool") is None


def test_module_level_decorators_take_a_site():
    site = McpSite()

    @decorators.tool(site=site, title="T")
    def t() -> str:
        return ""

    @decorators.prompt(site=site)
    def p() -> str:
        return ""

    @decorators.resource("r://{id}", site=site)
    def r(id: str) -> str:
        return id

    assert site.get_tool("t").title == "T"
    assert [x.name for x in site.prompts] == ["p"]
    assert [x.uri_template for x in site.resource_templates] == ["r://{id}"]


def test_remove():
    site = McpSite()

    def f(id: str = "") -> str:
        return ""

    site.add_tool(f)
    site.add_prompt(f)
    site.add_resource(f, "a://1")
    site.add_resource(f, "a://{id}")
    site.remove_tool("f")
    site.remove_prompt("f")
    site.remove_resource("a://1")
    site.remove_resource("a://{id}")
    assert site.tools == [] and site.prompts == [] and site.resources == [] and site.resource_templates == []
    for remove, key in ((site.remove_tool, "f"), (site.remove_prompt, "f"), (site.remove_resource, "a://1")):
        with pytest.raises(NotRegistered):
            remove(key)


def test_capabilities_follow_what_is_registered():
    site = McpSite()
    assert site.capabilities(ctx()) == {"logging": {}}

    def f(id: str = "") -> str:
        return ""

    site.add_tool(f)
    assert site.capabilities(ctx()) == {"logging": {}, "tools": {"listChanged": True}}
    site.add_resource(f, "a://1")
    caps = site.capabilities(ctx())
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert "completions" not in caps
    site.add_resource(f, "a://{id}")
    assert "completions" in site.capabilities(ctx())
    other = McpSite()
    other.add_prompt(f)
    assert set(other.capabilities(ctx())) == {"logging", "prompts", "completions"}


def test_server_info_from_settings(settings):
    site = McpSite()
    assert site.server_info()["name"] == "django-mcp-tests"
    settings.DJANGO_MCP = {"SERVER_NAME": "lib", "SERVER_TITLE": "Library", "SERVER_VERSION": "9.9",
                           "INSTRUCTIONS": "Use it."}
    assert site.server_info() == {"name": "lib", "version": "9.9", "title": "Library"}
    assert site.instructions() == "Use it."


# Permissions -------------------------------------------------------------------------------


def permission_site() -> McpSite:
    site = McpSite()

    @site.tool()
    def public() -> str:
        return "public"

    @site.tool(permission=lambda ctx: False)
    def hidden() -> str:
        return "hidden"

    async def staff_only(ctx: Any) -> bool:
        return getattr(ctx.user, "pk", None) == 1

    @site.tool(permission=staff_only)
    def staff() -> str:
        return "staff"

    @site.tool(permission="library.change_book")
    def editor() -> str:
        return "editor"

    @site.resource("r://open")
    def open_resource() -> str:
        return "open"

    @site.resource("r://closed", permission=lambda ctx: False)
    def closed() -> str:
        return "closed"

    @site.resource("r://t/{id}", permission=lambda ctx: ctx.user is not None)
    def templated(id: str) -> str:
        return id

    @site.prompt(permission=lambda ctx: False)
    def secret_prompt() -> str:
        return "x"

    @site.prompt(complete={"a": ["alpha"]})
    def open_prompt(a: str) -> str:
        return a

    return site


async def test_permissions_filter_listings():
    site = permission_site()
    anonymous = [t["name"] for t in (await site.list_tools(None, ctx())).items]
    assert anonymous == ["public"]
    staff = [t["name"] for t in (await site.list_tools(None, ctx(StubUser()))).items]
    assert staff == ["public", "staff"]
    editor = [t["name"] for t in (await site.list_tools(None, ctx(StubUser("library.change_book")))).items]
    assert editor == ["public", "staff", "editor"]
    assert [r["uri"] for r in (await site.list_resources(None, ctx())).items] == ["r://open"]
    assert (await site.list_resource_templates(None, ctx())).items == []
    assert [t["uriTemplate"] for t in (await site.list_resource_templates(None, ctx(StubUser()))).items] == ["r://t/{id}"]
    assert [p["name"] for p in (await site.list_prompts(None, ctx())).items] == ["open_prompt"]


async def test_forbidden_calls_look_like_unknown_ones():
    site = permission_site()
    for name in ("hidden", "staff", "editor", "does_not_exist"):
        with pytest.raises(InvalidParams) as info:
            await site.call_tool(name, {}, ctx())
        assert info.value.message == f"Unknown tool: {name}"
        assert info.value.data == {"name": name}
    assert (await site.call_tool("staff", {}, ctx(StubUser())))["content"][0]["text"] == "staff"
    with pytest.raises(ResourceNotFound):
        await site.read_resource("r://closed", ctx())
    with pytest.raises(ResourceNotFound):
        await site.read_resource("r://t/1", ctx())
    assert (await site.read_resource("r://t/1", ctx(StubUser())))[0]["text"] == "1"
    with pytest.raises(InvalidParams, match="Unknown prompt"):
        await site.get_prompt("secret_prompt", {}, ctx())


async def test_permission_through_the_dispatcher():
    dispatcher = Dispatcher(permission_site(), state_codec=SignedStateCodec())
    listed = await dispatcher.handle_request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, ctx())
    assert [t["name"] for t in listed["result"]["tools"]] == ["public"]
    called = await dispatcher.handle_request(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hidden", "arguments": {}}}, ctx())
    assert called["error"] == {"code": -32602, "message": "Unknown tool: hidden", "data": {"name": "hidden"}}


async def test_completion_through_the_registry():
    site = permission_site()
    assert await site.complete({"type": "ref/prompt", "name": "open_prompt"}, {"name": "a", "value": "al"}, {},
                               ctx()) == {"values": ["alpha"], "total": 1, "hasMore": False}
    with pytest.raises(InvalidParams):
        await site.complete({"type": "ref/prompt", "name": "secret_prompt"}, {"name": "a", "value": ""}, {}, ctx())
    # A concrete resource has nothing to complete; an unknown template is an error.
    assert await site.complete({"type": "ref/resource", "uri": "r://open"}, {"name": "x", "value": ""}, {},
                               ctx()) == {"values": [], "total": 0, "hasMore": False}
    with pytest.raises(InvalidParams):
        await site.complete({"type": "ref/resource", "uri": "r://nope/{x}"}, {"name": "x", "value": ""}, {}, ctx())
    with pytest.raises(InvalidParams):
        await site.complete({"type": "ref/resource", "uri": "r://t/{id}"}, {"name": "id", "value": ""}, {}, ctx())
    with pytest.raises(InvalidParams):
        await site.complete({"type": "ref/other"}, {"name": "x", "value": ""}, {}, ctx())


async def test_can_subscribe():
    site = permission_site()
    assert await site.can_subscribe("r://open", ctx())
    assert await site.can_subscribe("r://t/5", ctx(user=object()))
    # The template's permission needs a user: without one it is as if the resource did not exist.
    assert not await site.can_subscribe("r://t/5", ctx())
    assert not await site.can_subscribe("r://elsewhere", ctx())


async def test_cannot_subscribe_to_a_forbidden_resource():
    site = permission_site()
    assert not await site.can_subscribe("r://closed", ctx())


def test_a_class_registered_with_options_keeps_its_docstring_as_description():
    class Summarise(Tool):
        """Summarise a text."""

        def call(self, text: str) -> str:
            return text

    site = McpSite()
    added = site.add_tool(Summarise, title="Summary")
    assert added.title == "Summary" and added.description == "Summarise a text."
