"""
Django admin actions as tools (``django_mcp.admin_actions``): schemas and annotations from
the ``ModelAdmin`` (MCP spec 2025-11-25, server/tools), the admin's permissions deciding who sees
and calls them, selections by ids, filter and search, and the admin's ``LogEntry`` rows.
"""

import json
from typing import Any

import jsonschema
import pytest
from asgiref.sync import sync_to_async
from django.contrib import admin
from django.contrib.admin.models import CHANGE, DELETION, LogEntry
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ImproperlyConfigured

from django_mcp.context import Context
from django_mcp.lint import definition_issues, schema_checker
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era
from django_mcp.sites import McpSite
from django_mcp.admin_actions import AdminActionTool, admin_action_tools, register_admin_actions
from django_mcp.transports.http import McpHttpConsumer
from tests.catalogue.admin_actions import site as actions_admin
from tests.catalogue.models import Volume, Writer
from tests.tools import modern_http

# Actions run on worker threads, which must see the rows the tests make: real transactions.
pytestmark = pytest.mark.django_db(transaction=True)

VOLUME_ADMIN = actions_admin.get_model_admin(Volume)


def rctx(user: Any, method: str = "tools/call") -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user, method=method)


def tools(**options: Any) -> dict[str, AdminActionTool]:
    return {tool.name: tool for tool in admin_action_tools(VOLUME_ADMIN, **options)}


def user_with(username: str, *codenames: str, is_staff: bool = True) -> User:
    user = User.objects.create_user(username, is_staff=is_staff)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="catalogue", codename__in=codenames))
    return user


@pytest.fixture
def people() -> dict[str, User]:
    return {
        "editor": user_with("editor", "view_volume", "change_volume"),
        "deleter": user_with("deleter", "view_volume", "change_volume", "delete_volume"),
        "viewer": user_with("viewer", "view_volume"),
        "outsider": user_with("outsider", "view_volume", "change_volume", "delete_volume", is_staff=False),
        "writer_deleter": user_with("writer_deleter", "view_writer", "delete_writer"),
    }


@pytest.fixture
def volumes() -> dict[str, Volume]:
    le_guin = Writer.objects.create(name="Ursula K. Le Guin", slug="le-guin")
    calvino = Writer.objects.create(name="Italo Calvino", slug="calvino")
    made = {title: Volume.objects.create(title=title, writer=writer, pages=pages) for title, writer, pages in (
        ("A Wizard of Earthsea", le_guin, 183), ("Invisible Cities", calvino, 165),
        ("The Baron in the Trees", calvino, 217), ("The Tombs of Atuan", le_guin, 163))}
    made["Secret diary"] = Volume.objects.create(title="Secret diary", writer=calvino, secret=True)
    return made


async def in_print(*titles: str) -> dict[str, bool]:
    return {volume.title: volume.in_print async for volume in Volume.objects.filter(title__in=titles)}


async def log_of(**filters: Any) -> list[tuple[str, int, str]]:
    return [(entry.object_repr, entry.action_flag, entry.get_change_message()) async for entry in
            LogEntry.objects.filter(**filters).order_by("object_repr")]


# Definitions ----------------------------------------------------------------------------------------


def test_tools_schemas_and_annotations():
    made = tools()
    assert list(made) == ["volume_mark_out_of_print", "volume_delete_selected", "volume_withdraw",
                          "volume_export_titles"]
    marking = made["volume_mark_out_of_print"].definition()
    assert marking["title"] == "Mark selected volumes as out of print"
    assert marking["description"].startswith("Mark selected volumes as out of print: the Django admin action")
    assert marking["annotations"] == {"readOnlyHint": False, "destructiveHint": False}
    assert made["volume_delete_selected"].definition()["title"] == "Delete selected volumes"
    # delete_selected, and actions that need the delete permission, are destructive.
    assert made["volume_delete_selected"].annotations["destructiveHint"] is True
    assert made["volume_withdraw"].annotations["destructiveHint"] is True
    schema = marking["inputSchema"]
    assert "anyOf" not in schema and "required" not in schema  # ids or filter: checked on call
    assert schema["properties"]["ids"] == {"type": "array", "items": {"type": "integer"}, "minItems": 1,
                                           "description": "Primary keys of the volumes to act on."}
    selection = schema["properties"]["filter"]
    assert selection["properties"]["in_print"] == {"type": "boolean"}
    assert selection["properties"]["format"] == {"type": "string", "enum": ["hb", "pb"], "maxLength": 2}
    assert selection["properties"]["writer"] == {"type": "integer"}
    assert selection["properties"]["writer__name"] == {"type": "string", "maxLength": 100}
    assert selection["properties"]["length"] == {"type": "string", "description": "length"}
    assert selection["properties"]["search"]["type"] == "string"
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"filter": {"title__icontains": "earth", "in_print": True}})
    assert not validator.is_valid({"filter": {"pages": 3}})  # not a list filter or search field
    for tool in made.values():
        definition = tool.definition()
        assert definition_issues("tool", definition, "tests", schema_checker()) == [], tool.name


def test_registration_options_and_errors():
    writer_tools = admin_action_tools(actions_admin.get_model_admin(Writer))
    assert [tool.name for tool in writer_tools] == ["writer_delete_selected"]  # mcp_actions = "__all__"
    assert set(writer_tools[0].input_schema["properties"]["filter"]["properties"]) == {"name", "search"}
    with pytest.raises(ImproperlyConfigured, match="names no actions"):
        admin_action_tools(admin.site.get_model_admin(Volume))  # no McpActionsMixin, no actions=
    plain = admin_action_tools(admin.site.get_model_admin(Volume), ["delete_selected"], prefix="book")
    assert [tool.name for tool in plain] == ["book_delete_selected"]
    with pytest.raises(TypeError, match="unknown options 'colour'"):
        admin_action_tools(VOLUME_ADMIN, colour="red")
    site = McpSite()
    with pytest.raises(ImproperlyConfigured, match="no action 'nope'"):
        register_admin_actions(Volume, admin_site=actions_admin, actions=["mark_out_of_print", "nope"], site=site)
    assert site.tools == []  # all or nothing
    added = register_admin_actions(Volume, admin_site=actions_admin, site=site)
    assert [tool.name for tool in site.tools] == [tool.name for tool in added] and len(added) == 4


# Who sees them ------------------------------------------------------------------------------------


async def test_the_admins_permissions_decide_who_sees_and_calls(people, volumes):
    site = McpSite()
    await sync_to_async(register_admin_actions)(Volume, admin_site=actions_admin, site=site)

    async def listed(user: User) -> set[str]:
        return {tool["name"] for tool in (await site.list_tools(None, rctx(user, "tools/list"))).items}

    assert await listed(people["editor"]) == {"volume_mark_out_of_print", "volume_export_titles"}
    assert await listed(people["deleter"]) == {"volume_mark_out_of_print", "volume_export_titles",
                                               "volume_delete_selected", "volume_withdraw"}
    assert await listed(people["viewer"]) == {"volume_export_titles"}
    assert await listed(people["outsider"]) == set()  # not staff: no admin at all
    assert await listed(people["writer_deleter"]) == set()  # no permission on volumes
    pk = volumes["Invisible Cities"].pk
    with pytest.raises(InvalidParams, match="Unknown tool"):
        await site.call_tool("volume_delete_selected", {"ids": [pk]}, rctx(people["editor"]))
    with pytest.raises(InvalidParams, match="Unknown tool"):
        await site.call_tool("volume_mark_out_of_print", {"ids": [pk]}, rctx(people["outsider"]))
    # The tool asks again when it runs, whoever calls it.
    refused = await tools()["volume_delete_selected"].run({"ids": [pk]}, rctx(people["editor"]))
    assert refused == {"content": [{"type": "text", "text": "You may not run 'Delete selected volumes'."}],
                       "isError": True}
    assert await Volume.objects.filter(pk=pk).aexists()
    assert await tools()["volume_delete_selected"].has_permission(Context(rctx(people["deleter"])))


# Running -------------------------------------------------------------------------------------------


async def test_an_action_changes_the_selected_rows_and_logs_them(people, volumes):
    ids = [volumes["Invisible Cities"].pk, volumes["The Tombs of Atuan"].pk]
    result = await tools()["volume_mark_out_of_print"].run({"ids": ids}, rctx(people["editor"]))
    assert result["isError"] is False
    assert result["structuredContent"] == {"action": "mark_out_of_print", "selected": 2,
                                           "messages": [{"level": "success", "message": "2 marked as out of print."}]}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert await in_print(*volumes) == {"A Wizard of Earthsea": True, "Invisible Cities": False,
                                        "The Baron in the Trees": True, "The Tombs of Atuan": False,
                                        "Secret diary": True}
    message = "Changed via MCP tool volume_mark_out_of_print: Mark selected volumes as out of print"
    assert await log_of(user=people["editor"]) == [("Invisible Cities", CHANGE, message),
                                                   ("The Tombs of Atuan", CHANGE, message)]
    entry = await LogEntry.objects.select_related("content_type").aget(object_repr="Invisible Cities")
    assert (entry.content_type.model, entry.object_id) == ("volume", str(ids[0]))


async def test_delete_selected_deletes_and_logs(people, volumes):
    ids = [volumes["A Wizard of Earthsea"].pk, volumes["The Baron in the Trees"].pk]
    result = await tools()["volume_delete_selected"].run({"ids": ids}, rctx(people["deleter"]))
    assert result["isError"] is False, result
    assert result["structuredContent"]["messages"] == [{"level": "success",
                                                        "message": "Successfully deleted 2 volumes."}]
    assert not await Volume.objects.filter(pk__in=ids).aexists()
    assert await Volume.objects.acount() == 3
    assert await log_of(user=people["deleter"]) == [("A Wizard of Earthsea", DELETION, ""),
                                                    ("The Baron in the Trees", DELETION, "")]


async def test_delete_selected_refuses_what_the_admin_refuses(people, volumes):
    calvino = await Writer.objects.aget(slug="calvino")
    [tool] = admin_action_tools(actions_admin.get_model_admin(Writer))
    # Deleting a writer deletes their volumes, which this user may not delete.
    refused = await tool.run({"ids": [calvino.pk]}, rctx(people["writer_deleter"]))
    assert refused["isError"] is True
    assert "permission denied as deleting them would delete related objects you may not delete" in refused["content"][0]["text"]
    assert await Writer.objects.filter(pk=calvino.pk).aexists()
    assert await LogEntry.objects.acount() == 0


async def test_rows_the_action_hides_are_still_logged(people, volumes):
    pk = volumes["Invisible Cities"].pk
    result = await tools()["volume_withdraw"].run({"ids": [pk]}, rctx(people["deleter"]))
    assert result["structuredContent"]["selected"] == 1
    assert (await Volume.objects.aget(pk=pk)).secret is True  # now hidden from the deleter's admin
    assert [flag for _, flag, _ in await log_of(object_id=str(pk))] == [CHANGE]


class ProtectingAdmin(type(VOLUME_ADMIN)):
    """Reports protected related objects (no catalogue model has a PROTECT key) and logs its own way."""

    audit: list[tuple[str, str]] = []

    def get_deleted_objects(self, objs, request):
        deletable, counts, perms_needed, _ = super().get_deleted_objects(objs, request)
        return deletable, counts, perms_needed, ['Loan: <a href="/loans/1/">Loan of volume 1</a>']

    def log_change(self, request, obj, message):
        self.audit.append((str(obj), message))


async def test_protected_objects_and_an_admins_own_log(people, volumes):
    model_admin = ProtectingAdmin(Volume, actions_admin)
    deleting, marking = admin_action_tools(model_admin, ["delete_selected", "mark_out_of_print"])
    pk = volumes["Invisible Cities"].pk
    refused = await deleting.run({"ids": [pk]}, rctx(people["deleter"]))
    assert refused["content"][0]["text"] == ("Delete selected volumes: refused, as these related objects are "
                                             "protected: Loan: Loan of volume 1")
    assert await Volume.objects.filter(pk=pk).aexists()
    await marking.run({"ids": [pk]}, rctx(people["editor"]))
    # An admin that overrides log_change is followed, instead of writing LogEntry rows directly.
    assert model_admin.audit == [("Invisible Cities", "Changed via MCP tool volume_mark_out_of_print: "
                                                      "Mark selected volumes as out of print")]
    assert await LogEntry.objects.acount() == 0


@pytest.mark.parametrize(("selection", "expected"), [
    ({"in_print": True, "writer__name": "Italo Calvino"}, {"Invisible Cities", "The Baron in the Trees"}),
    ({"search": "calvino baron"}, {"The Baron in the Trees"}),
    ({"search": "tombs"}, {"The Tombs of Atuan"}),
    ({"length": "long"}, {"A Wizard of Earthsea", "The Baron in the Trees"}),
    ({"title__istartswith": "the", "format": "pb"}, {"The Baron in the Trees", "The Tombs of Atuan"}),
    ({"title__in": ["Invisible Cities", "Secret diary"]}, {"Invisible Cities"}),  # secret: not the editor's
])
async def test_selection_by_filter_and_search(people, volumes, selection, expected):
    if "writer__name" in selection:
        await Volume.objects.filter(title="The Tombs of Atuan").aupdate(in_print=False)
    result = await tools()["volume_mark_out_of_print"].run({"filter": selection}, rctx(people["editor"]))
    assert result["structuredContent"]["selected"] == len(expected), result
    changed = {title for title, flag in (await in_print(*volumes)).items() if not flag} - {"The Tombs of Atuan"}
    assert changed == expected - {"The Tombs of Atuan"}
    assert {title for title, _, _ in await log_of(user=people["editor"])} == expected


async def test_ids_and_filter_together_and_unknown_ids(people, volumes):
    ids = [volumes["Invisible Cities"].pk, volumes["A Wizard of Earthsea"].pk, volumes["Secret diary"].pk, 999999]
    selection = {"ids": [str(pk) for pk in ids], "filter": {"writer": volumes["Invisible Cities"].writer_id}}
    result = await tools()["volume_mark_out_of_print"].run(selection, rctx(people["editor"]))
    # Unknown, hidden (secret) and filtered-out ids are reported, never acted on.
    assert result["structuredContent"]["selected"] == 1
    assert sorted(result["structuredContent"]["not_found"]) == sorted(ids[1:])
    assert await in_print("Invisible Cities", "A Wizard of Earthsea", "Secret diary") == {
        "Invisible Cities": False, "A Wizard of Earthsea": True, "Secret diary": True}
    nothing = await tools()["volume_mark_out_of_print"].run({"ids": [999999]}, rctx(people["editor"]))
    assert nothing["structuredContent"]["selected"] == 0 and nothing["structuredContent"]["not_found"] == [999999]
    assert nothing["structuredContent"]["messages"][0]["level"] == "warning"
    assert await LogEntry.objects.acount() == 1


@pytest.mark.parametrize(("arguments", "error"), [
    ({}, "Invalid arguments for tool volume_mark_out_of_print: give ids, filter or both"),
    ({"ids": []}, "ids: expected a non-empty list"),
    ({"ids": ["abc"]}, "ids: “abc” value must be an integer."),
    ({"ids": [1], "colour": "red"}, "unknown argument colour"),
    ({"filter": {"pages__gt": 3}}, ("filter.pages__gt: not a filter of this tool; it filters on format, in_print, "
                                    "length, search, title, writer, writer__name")),
    ({"filter": {"writer__slug": "x"}}, "filter.writer__slug: not a filter"),
    ({"filter": {"length": "medium"}}, "filter.length: expected one of short, long"),
    ({"filter": {"title__in": "Invisible Cities"}}, "filter.title__in: expected a list"),
    ({"filter": {"writer": "le-guin"}}, "Invalid filter: Field 'id' expected a number but got 'le-guin'."),
])
async def test_bad_selections_are_tool_errors(people, volumes, arguments, error):
    result = await tools()["volume_mark_out_of_print"].run(arguments, rctx(people["editor"]))
    assert result["isError"] is True
    assert error in result["content"][0]["text"]
    assert await LogEntry.objects.acount() == 0


async def test_large_selections_and_responses(people, volumes):
    too_many = await tools(max_selection=1)["volume_mark_out_of_print"].run({"filter": {"search": "the"}},
                                                                             rctx(people["editor"]))
    assert too_many["isError"] is True and "more than 1 volumes" in too_many["content"][0]["text"]
    exported = await tools()["volume_export_titles"].run({"filter": {"search": "atuan"}}, rctx(people["viewer"]))
    assert exported["structuredContent"]["response"] == {"status": 200, "content_type": "text/plain"}
    assert await LogEntry.objects.acount() == 0  # an action that answers a response is not done changing


# Over a real transport -----------------------------------------------------------------------------


async def test_an_action_tool_over_streamable_http(people, volumes):
    site = McpSite()
    await sync_to_async(register_admin_actions)(Volume, admin_site=actions_admin, actions=["mark_out_of_print"],
                                                site=site)
    app = McpHttpConsumer.as_asgi(site=site)

    async def post(method: str, params: dict[str, Any], key: str, name: str | None = None) -> dict[str, Any]:
        status, answer = await modern_http.post(app, method, params, key, name)
        assert status == 200, answer
        return answer

    assert [tool["name"] for tool in (await post("tools/list", {}, "editor-key"))["result"]["tools"]] == [
        "volume_mark_out_of_print"]
    assert (await post("tools/list", {}, "viewer-key"))["result"]["tools"] == []
    call = {"name": "volume_mark_out_of_print", "arguments": {"filter": {"search": "earthsea"}}}
    result = (await post("tools/call", call, "editor-key", "volume_mark_out_of_print"))["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["selected"] == 1
    assert await in_print("A Wizard of Earthsea") == {"A Wizard of Earthsea": False}
    assert [(title, flag) for title, flag, _ in await log_of(user=people["editor"])] == [
        ("A Wizard of Earthsea", CHANGE)]
