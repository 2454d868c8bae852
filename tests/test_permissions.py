"""
Permission classes (``django_mcp.permissions``): composition with ``&``, ``|`` and ``~``, the
built-ins against real Django users and permission rows, object permissions, the
``DEFAULT_PERMISSION_CLASSES`` setting, and the promise that one decision serves listings and
calls alike (through the dispatcher in both eras, and over stdio).

Permission checks that touch the database run in a thread (``database_sync_to_async``), so the
async tests use ``transaction=True``: rows made by the fixtures must be committed to be seen there.
"""

import json
from types import SimpleNamespace
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser, Group, Permission, User
from django.core.exceptions import ImproperlyConfigured

from django_mcp.context import Context
from django_mcp.permissions import (AND, NOT, OR, AllowAny, BasePermission, CallablePermission,
                                    DjangoModelPermissions, DjangoObjectPermissions, HasPermission, HasScopes,
                                    IsAdminUser, IsAuthenticated, allows, as_permission, as_permissions)
from django_mcp.prompts.base import Prompt
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.dispatcher import Dispatcher
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era
from django_mcp.request_state import SignedStateCodec
from django_mcp.resources.base import Resource
from django_mcp.sites import McpSite
from django_mcp.tools.base import Tool

from tests.transports.stdio_driver import serve_lines


db = pytest.mark.django_db(transaction=True)
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def rctx(user: Any = None, *, auth: Any = None, method: str | None = "tools/call", era: str = "legacy"):
    version = {"legacy": (Era.LEGACY, "2025-11-25"), "modern": (Era.MODERN, MODERN)}[era]
    return RequestContext(*version, user=user, auth=auth, method=method)


def cx(user: Any = None, **kwargs: Any) -> Context:
    return Context(rctx(user, **kwargs))


async def decide(permission: Any, user: Any) -> bool:
    """One permission (class, instance or shorthand) asked the way a primitive asks it."""
    return await allows([as_permission(permission)], cx(user), None)


def grant(user: User, *codenames: str) -> User:
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="auth", codename__in=codenames))
    return User.objects.get(pk=user.pk)  # a fresh instance: has_perm caches per instance


@pytest.fixture
def users(transactional_db):
    make = User.objects.create_user
    return SimpleNamespace(anon=AnonymousUser(), plain=make("plain"), staff=make("staff", is_staff=True),
                           viewer=grant(make("viewer"), "view_user"),
                           editor=grant(make("editor"), "view_user", "change_user"),
                           root=make("root", is_superuser=True, is_staff=True))


class Counting(BasePermission):
    """Answers ``answer`` and counts how often it was asked, to observe short-circuits."""

    def __init__(self, answer: bool, on_object: bool = True) -> None:
        self.answer, self.on_object, self.calls = answer, on_object, 0

    async def has_permission(self, ctx, primitive):
        self.calls += 1
        return self.answer

    async def has_object_permission(self, ctx, primitive, obj):
        return self.on_object


# 1. Composition -------------------------------------------------------------------------------


def test_operators_build_and_or_not_from_classes_instances_and_shorthands():
    assert isinstance(IsAuthenticated & IsAdminUser, AND)
    assert isinstance(IsAdminUser | HasPermission("auth.view_user"), OR)
    assert isinstance(~IsAuthenticated, NOT) and isinstance(~IsAuthenticated(), NOT)
    # A string on either side becomes HasPermission, a function a CallablePermission.
    mixed = IsAuthenticated & "auth.view_user"
    assert isinstance(mixed.second, HasPermission) and mixed.second.perms == ("auth.view_user",)
    assert isinstance(("auth.view_user" | IsAdminUser).first, HasPermission)
    assert isinstance(((lambda ctx: True) & IsAuthenticated()).first, CallablePermission)
    with pytest.raises(ImproperlyConfigured):
        IsAuthenticated & 42
    # as_permission(s): what permission_classes and permission= accept.
    instance = IsAuthenticated()
    assert as_permission(instance) is instance and type(as_permission(IsAdminUser)) is IsAdminUser
    assert as_permissions(None) == [] and [type(p) for p in as_permissions(IsAuthenticated)] == [IsAuthenticated]
    assert [type(p) for p in as_permissions("a.b")] == [HasPermission]
    assert [type(p) for p in as_permissions([AllowAny, "a.b", len])] == [AllowAny, HasPermission, CallablePermission]
    for bad in (42, None, object()):
        with pytest.raises(ImproperlyConfigured, match="Not a permission"):
            as_permission(bad)


@db
@pytest.mark.parametrize("expression, allowed", [
    (IsAuthenticated & IsAdminUser, {"staff", "root"}), (~IsAuthenticated, {"anon"}), (~IsAuthenticated(), {"anon"}),
    (IsAdminUser | HasPermission("auth.view_user"), {"staff", "viewer", "editor", "root"}),
    (IsAuthenticated & "auth.view_user", {"viewer", "editor", "root"}),
    ("auth.change_user" | IsAdminUser, {"staff", "editor", "root"}),
    (IsAuthenticated() & IsAdminUser, {"staff", "root"}),
    (IsAdminUser | (lambda ctx: ctx.user.username == "plain"), {"plain", "staff", "root"}),
    (~(IsAdminUser | "auth.view_user") & IsAuthenticated, {"plain"}),
])
async def test_compositions_against_real_users(users, expression, allowed):
    assert {name for name, user in vars(users).items() if await decide(expression, user)} == allowed


async def test_and_or_and_allows_stop_at_the_first_decisive_answer():
    for op, first_answer, second_asked in [("&", False, 0), ("&", True, 1), ("|", True, 0), ("|", False, 1)]:
        first, second = Counting(first_answer), Counting(True)
        combined = first & second if op == "&" else first | second
        assert await combined.has_permission(cx(), None) == (first_answer or op == "|")
        assert (first.calls, second.calls) == (1, second_asked), (op, first_answer)
    # A primitive's permission_classes list is an AND too.
    no, yes = Counting(False), Counting(True)
    assert not await allows([no, yes], cx(), None) and yes.calls == 0


# 2. Built-ins -----------------------------------------------------------------------------------


@db
async def test_builtins_against_real_users(users):
    table = {AllowAny: {"anon", "plain", "staff", "viewer", "editor", "root"},
             IsAuthenticated: {"plain", "staff", "viewer", "editor", "root"}, IsAdminUser: {"staff", "root"},
             HasPermission("auth.view_user"): {"viewer", "editor", "root"},
             HasPermission("auth.view_user", "auth.change_user"): {"editor", "root"}}
    for permission, allowed in table.items():
        decided = {name for name, user in vars(users).items() if await decide(permission, user)}
        assert decided == allowed, permission
    for bad_names in [(), ("view_user",), (42,), ("auth.view_user", "change_user")]:
        with pytest.raises(ImproperlyConfigured, match="app_label.codename"):
            HasPermission(*bad_names)
    # No user at all (a context built without one) is refused by all but AllowAny.
    assert [await decide(p, None) for p in (AllowAny, IsAuthenticated, IsAdminUser, "a.b")] == [True] + [False] * 3


def model_primitive(base: type, **attrs: Any) -> type:
    """A class-based primitive over ``User`` (the decorators take no ``model``) guarded by model perms."""
    work = {Tool: "call", Resource: "read", Prompt: "render"}[base]
    return type(f"User{base.__name__}", (base,), {"model": User, "permission_classes": [DjangoModelPermissions],
                                                  work: lambda self: "ok", **attrs})


UserTool, UserPrompt = model_primitive(Tool), model_primitive(Prompt)
UserResource = model_primitive(Resource, uri="users://all")
ReadOnlyUserTool = model_primitive(Tool, annotations={"readOnlyHint": True})


@db
@pytest.mark.parametrize("primitive, method, allowed", [
    # Listing a tool asks what calling it asks: hidden and refused agree.
    (UserTool, "tools/list", {"editor", "root"}),
    (UserTool, "tools/call", {"editor", "root"}),
    (ReadOnlyUserTool, "tools/list", {"viewer", "editor", "root"}),
    (ReadOnlyUserTool, "tools/call", {"viewer", "editor", "root"}),
    (UserResource, "resources/list", {"viewer", "editor", "root"}),
    (UserResource, "resources/read", {"viewer", "editor", "root"}),
    (UserPrompt, "prompts/get", {"viewer", "editor", "root"}),
    (UserPrompt, "completion/complete", {"viewer", "editor", "root"}),
])
async def test_django_model_permissions_map_actions(users, primitive, method, allowed):
    instance = primitive()
    decided = {name for name, user in vars(users).items() if await instance.has_permission(cx(user, method=method))}
    assert decided == allowed


@db
async def test_django_model_permissions_misconfigured(users):
    no_model = type("NoModel", (Tool,), {"permission_classes": [DjangoModelPermissions], "call": lambda self: ""})
    with pytest.raises(ImproperlyConfigured, match="names no model.*set a `model` attribute"):
        await no_model().has_permission(cx(users.viewer))
    class CallOnly(DjangoModelPermissions):
        perms_map = {"call": DjangoModelPermissions.view}

    unmapped = type("Unmapped", (Tool,), {"model": User, "permission_classes": [CallOnly], "call": lambda self: ""})
    with pytest.raises(ImproperlyConfigured, match="no entry for MCP action 'call_read_only'"):
        await type("ReadOnly", (unmapped,), {"annotations": {"readOnlyHint": True}})().has_permission(
            cx(users.viewer, method="tools/call"))


class SelfBackend:
    """A tiny object-permission backend: a user may view and change their own row, nobody else's."""

    def has_perm(self, user_obj, perm, obj=None):
        return obj is not None and obj.pk == user_obj.pk


@db
async def test_django_object_permissions(users, settings):
    tool = model_primitive(Tool, permission_classes=[DjangoObjectPermissions])()
    # ModelBackend grants no object permissions, so model-level change_user is not enough;
    # only an active superuser passes (User.has_perm short-circuits for them).
    assert await tool.has_permission(cx(users.editor))
    assert not await tool.has_object_permission(cx(users.editor), users.plain)
    assert await tool.has_object_permission(cx(users.root), users.plain)
    settings.AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend", f"{__name__}.SelfBackend"]
    assert await tool.has_object_permission(cx(users.plain), users.plain)
    assert not await tool.has_object_permission(cx(users.plain), users.editor)
    assert not await tool.has_object_permission(cx(users.anon), users.plain)


async def test_has_scopes():
    read_write = HasScopes("read", "write")
    cases = [(SimpleNamespace(scopes=["read", "write", "x"]), True), (SimpleNamespace(scopes={"read"}), False),
             (SimpleNamespace(scope="write read"), True), (SimpleNamespace(scope="read"), False),
             (SimpleNamespace(scopes="read write"), True), (SimpleNamespace(), False), (None, False)]
    for auth, expected in cases:
        assert await read_write.has_permission(cx(AnonymousUser(), auth=auth), None) is expected, auth
    with pytest.raises(ImproperlyConfigured):
        HasScopes()


@db
async def test_callable_permissions_get_the_context_sync_ones_may_query(users):
    await database_sync_to_async(lambda: Group.objects.create(name="editors").user_set.add(users.editor))()
    seen = []

    def in_editors(ctx):
        seen.append(ctx)
        return ctx.user.groups.filter(name="editors").exists()  # the ORM: only legal off the event loop

    async def is_viewer(ctx):
        seen.append(ctx)
        return ctx.user.username == "viewer"

    for fn, allowed in ((in_editors, {"editor"}), (is_viewer, {"viewer"})):
        assert {name for name, user in vars(users).items() if await decide(fn, user)} == allowed
    assert all(isinstance(ctx, Context) for ctx in seen) and len(seen) == 12


@pytest.mark.django_db  # sync callables run through database_sync_to_async
async def test_a_callable_returning_an_awaitable_is_not_taken_as_true():
    async def refuse(ctx):
        return False

    # A sync wrapper around an async check (a lambda, a decorator without functools.wraps…) hands
    # back a coroutine; a coroutine object is truthy, so unless it is awaited this allows everyone.
    assert not await decide(lambda ctx: refuse(ctx), None)


# 3. Primitives: shorthand, object permissions ------------------------------------------------


@db
async def test_permission_shorthand_adds_to_permission_classes(users):
    site = McpSite()

    site.tool(name="both", permission_classes=[IsAuthenticated], permission="auth.change_user")(lambda: "")
    tool = site.get_tool("both")
    assert [type(p) for p in tool.get_permissions()] == [IsAuthenticated, HasPermission]
    assert [await tool.has_permission(cx(u)) for u in (users.anon, users.viewer, users.editor)] == [False, False, True]


async def test_object_permission_or_counts_an_operand_only_if_it_allowed_both():
    site = McpSite()
    view_only, object_only = Counting(True, on_object=False), Counting(False, on_object=True)
    site.tool(name="mixed", permission_classes=[view_only | object_only])(lambda: "")
    site.tool(name="second_allows_both", permission_classes=[view_only | Counting(True)])(lambda: "")
    site.tool(name="list_and", permission_classes=[AllowAny, view_only])(lambda: "")  # a list is an AND
    mixed_tool = site.get_tool("mixed")
    assert await mixed_tool.has_permission(cx())  # view_only allows the primitive...
    assert not await mixed_tool.has_object_permission(cx(), object())  # ...but not the object
    assert await site.get_tool("second_allows_both").has_object_permission(cx(), object())
    assert not await site.get_tool("list_and").has_object_permission(cx(), object())


# 4. One decision for listings and calls --------------------------------------------------------


def guarded_site() -> McpSite:
    site = McpSite("permissions")
    guards = {"open_tool": AllowAny, "members": IsAuthenticated, "viewers": "auth.view_user",
              "staff_or_viewer": IsAdminUser | "auth.view_user", "anonymous_only": ~IsAuthenticated}
    for name, guard in guards.items():
        site.tool(name=name, permission=guard)(lambda: "ok")
    site.resource("perm://open")(lambda: "ok")
    site.resource("perm://viewers", permission="auth.view_user")(lambda: "ok")
    site.resource("perm://users/{id}", permission=IsAuthenticated & "auth.view_user")(lambda id: "ok")
    site.prompt(name="open_prompt", complete={"topic": ["django"]})(lambda topic="": "ok")
    site.prompt(name="viewer_prompt", permission=HasPermission("auth.view_user"),
                complete={"topic": ["django"]})(lambda topic="": "ok")
    return site


async def ask(dispatcher: Dispatcher, user: Any, era: str, method: str, params: dict | None = None) -> dict:
    if era == "modern":
        params = {**(params or {}), "_meta": ENVELOPE}
    message = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}
    # A new context per request: permission decisions are cached per request.
    return await dispatcher.handle_request(message, rctx(user, method=None, era=era))


def as_unknown(unknown: dict, missing: str, name: str) -> dict:
    """The answer a name that does not exist got, with that name swapped for ``name``."""
    return json.loads(json.dumps(unknown).replace(missing, name))


@db
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_listed_equals_usable_and_hidden_looks_unknown(users, era):
    site = guarded_site()
    dispatcher = Dispatcher(site, state_codec=SignedStateCodec())
    expected = {"plain": {"open_tool", "members", "perm://open", "open_prompt"},
                "viewer": {"open_tool", "members", "viewers", "staff_or_viewer", "perm://open", "perm://viewers",
                           "perm://users/{id}", "open_prompt", "viewer_prompt"},
                "anon": {"open_tool", "anonymous_only", "perm://open", "open_prompt"}}
    for who, visible in expected.items():
        user = getattr(users, who)
        listed = {t["name"] for t in (await ask(dispatcher, user, era, "tools/list"))["result"]["tools"]}
        listed |= {r["uri"] for r in (await ask(dispatcher, user, era, "resources/list"))["result"]["resources"]}
        listed |= {t["uriTemplate"] for t in
                   (await ask(dispatcher, user, era, "resources/templates/list"))["result"]["resourceTemplates"]}
        listed |= {p["name"] for p in (await ask(dispatcher, user, era, "prompts/list"))["result"]["prompts"]}
        assert listed == visible, who

        prompts = [p.name for p in site.prompts]
        probes = [("tools/call", lambda n: {"name": n, "arguments": {}}, [t.name for t in site.tools], -32602),
                  ("resources/read", lambda u: {"uri": u.replace("{id}", "1")},
                   [r.key for r in site.resources + site.resource_templates], -32002 if era == "legacy" else -32602),
                  ("prompts/get", lambda n: {"name": n}, prompts, -32602),
                  ("completion/complete", lambda n: {"ref": {"type": "ref/prompt", "name": n},
                                                     "argument": {"name": "topic", "value": "dj"}}, prompts, -32602)]
        for method, params, keys, code in probes:
            missing = "perm://nope" if method == "resources/read" else "nope"
            unknown = await ask(dispatcher, user, era, method, params(missing))
            assert unknown["error"]["code"] == code and missing in unknown["error"]["message"], unknown
            for key in keys:
                answer = await ask(dispatcher, user, era, method, params(key))
                if key in visible:
                    assert "result" in answer, (who, key, answer)
                else:  # refused exactly like a name that does not exist
                    assert answer == as_unknown(unknown, missing, key.replace("{id}", "1")), (who, key)


@db
async def test_a_tool_listed_by_model_permissions_is_callable(users):
    # Listings and calls share one decision: a view-only user neither sees nor calls a tool that
    # needs change_user; an editor does both.
    site = McpSite()
    site.register(UserTool)
    for user, expected in ((users.viewer, []), (users.editor, ["user_tool"])):
        listed = [t["name"] for t in (await site.list_tools(None, rctx(user, method="tools/list"))).items]
        assert listed == expected
        if expected:
            assert (await site.call_tool("user_tool", {}, rctx(user, method="tools/call")))["isError"] is False
        else:
            with pytest.raises(InvalidParams, match="Unknown tool: user_tool"):
                await site.call_tool("user_tool", {}, rctx(user, method="tools/call"))


@db
async def test_stdio_serves_the_same_decision(users):
    site = McpSite("stdio-permissions")
    site.tool(name="viewers", permission="auth.view_user")(lambda: "seen")
    site.tool(name="open_tool")(lambda: "open")
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    call, modern_call = {"name": "viewers", "arguments": {}}, {"name": "nope", "arguments": {}, "_meta": ENVELOPE}
    lines = [{"id": 1, "method": "initialize", "params": init}, {"id": 2, "method": "tools/list"},
             {"id": 3, "method": "tools/call", "params": call},
             {"id": 4, "method": "tools/call", "params": {**call, "_meta": ENVELOPE}},
             {"id": 5, "method": "tools/call", "params": modern_call}]

    async def run(user: Any) -> dict[int, dict]:
        return await serve_lines(site, user, [{"jsonrpc": "2.0", **line} for line in lines])

    viewer = await run(users.viewer)
    assert {t["name"] for t in viewer[2]["result"]["tools"]} == {"viewers", "open_tool"}
    assert viewer[3]["result"]["content"][0]["text"] == viewer[4]["result"]["content"][0]["text"] == "seen"
    plain = await run(users.plain)
    assert {t["name"] for t in plain[2]["result"]["tools"]} == {"open_tool"}
    for answer in (plain[3], plain[4]):
        assert answer["error"] == {"code": -32602, "message": "Unknown tool: viewers", "data": {"name": "viewers"}}
    assert plain[5]["error"] == {"code": -32602, "message": "Unknown tool: nope", "data": {"name": "nope"}}


# 5. The default from settings -------------------------------------------------------------------


@db
async def test_default_permission_classes_come_from_settings(users, settings):
    site = McpSite()
    site.tool(name="unguarded")(lambda: "u")
    site.tool(name="explicit", permission_classes=[AllowAny])(lambda: "e")
    site.tool(name="explicitly_empty", permission_classes=[])(lambda: "x")

    async def names(user):
        return [t["name"] for t in (await site.list_tools(None, rctx(user, method="tools/list"))).items]

    assert await names(users.anon) == ["unguarded", "explicit", "explicitly_empty"]  # AllowAny by default
    settings.DJANGO_MCP = {**settings.DJANGO_MCP,
                           "DEFAULT_PERMISSION_CLASSES": ["django_mcp.permissions.IsAuthenticated"]}
    # Read per request, so a site built before the change follows it; explicit lists win.
    assert await names(users.anon) == ["explicit", "explicitly_empty"]
    assert await names(users.plain) == ["unguarded", "explicit", "explicitly_empty"]
    with pytest.raises(InvalidParams, match="Unknown tool: unguarded"):
        await site.call_tool("unguarded", {}, rctx(users.anon))
    assert (await site.call_tool("unguarded", {}, rctx(users.plain)))["content"][0]["text"] == "u"


# 6. Bad entries fail at registration ------------------------------------------------------------


@pytest.mark.parametrize("register", [
    lambda site: site.tool(permission=42)(lambda: ""),
    lambda site: site.tool(permission_classes=[IsAuthenticated, object()])(lambda: ""),
    lambda site: site.resource("x://1", permission=3.5)(lambda: ""),
    lambda site: site.prompt(permission="no_dot")(lambda: ""),
    lambda site: site.register(type("Bad", (Tool,), {"permission": 42, "call": lambda self: ""})),
])
def test_bad_entries_fail_at_registration(register):
    site = McpSite()
    with pytest.raises(ImproperlyConfigured):
        register(site)
    assert site.tools == site.resources == site.prompts == []


def test_a_permission_class_still_makes_a_type_union():
    # `IsAuthenticated | None` in an annotation evaluated at run time is a Union, not an OR.
    assert (IsAuthenticated | None).__args__ == (IsAuthenticated, type(None))
    assert isinstance(IsAuthenticated | "auth.view_user", BasePermission)
