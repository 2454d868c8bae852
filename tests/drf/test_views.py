"""
DRF views published as tools (``django_mcp.drf.views``): schemas from the view's serializer,
filters and pagination; calls through the view's own ``as_view()``, with its authentication,
permission, throttle, filter and pagination classes; responses as ``CallToolResult`` (MCP spec
2025-11-25, server/tools).
"""

import json
from typing import Any

import jsonschema
import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from django_mcp.context import Context
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.versions import Era
from django_mcp.sites import AlreadyRegistered, McpSite
from django_mcp.drf import McpUserAuthentication, ViewTool, register_view, view_tools
from django_mcp.transports.http import McpHttpConsumer
from tests.catalogue.api import BrokenView, EntryList, VolumeViewSet, WhoAmI, WriterViewSet
from tests.catalogue.models import Entry, Volume, Writer
from tests.testapp.authentication import ApiKey
from tests.tools import modern_http

# Views run on worker threads, which must see the rows the tests make: real transactions.
pytestmark = pytest.mark.django_db(transaction=True)


def ctx(user: Any = None, auth: Any = None) -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user, auth=auth)


def tools_of(view: type, actions: Any = None, **options: Any) -> dict[str, ViewTool]:
    return {tool.name: tool for tool in view_tools(view, actions, **options)}


@pytest.fixture
def people():
    cache.clear()  # DRF's throttles count in the default cache
    return {"staff": User.objects.create_user("staff", is_staff=True), "reader": User.objects.create_user("reader")}


@pytest.fixture
def catalogue(people):
    le_guin = Writer.objects.create(name="Ursula K. Le Guin", slug="le-guin")
    calvino = Writer.objects.create(name="Italo Calvino", slug="calvino")
    volumes = {title: Volume.objects.create(title=title, writer=writer, pages=pages) for title, writer, pages in (
        ("A Wizard of Earthsea", le_guin, 183), ("Invisible Cities", calvino, 165),
        ("The Baron in the Trees", calvino, 217), ("The Tombs of Atuan", le_guin, 163))}
    Volume.objects.create(title="Secret diary", writer=calvino, secret=True)
    return volumes


# Tools and their schemas -------------------------------------------------------------------------------


def test_viewset_actions_become_named_tools_with_hints():
    tools = tools_of(VolumeViewSet)
    assert list(tools) == ["volume_list", "volume_retrieve", "volume_create", "volume_update",
                           "volume_partial_update", "volume_destroy"]
    hints = {name: tool.definition()["annotations"] for name, tool in tools.items()}
    assert hints["volume_list"] == hints["volume_retrieve"] == {"readOnlyHint": True}
    assert hints["volume_create"] == {"readOnlyHint": False, "destructiveHint": False}
    assert hints["volume_update"]["idempotentHint"] is True and hints["volume_partial_update"]["idempotentHint"]
    assert hints["volume_destroy"]["destructiveHint"] is True
    assert tools["volume_list"].title == "List volumes"
    assert tools["volume_list"].description.startswith("List volumes.\n\nThe public volumes of the catalogue.")
    assert list(tools_of(VolumeViewSet, ["list"], prefix="book")) == ["book_list"]
    assert list(tools_of(EntryList)) == ["entry_list"]
    assert list(tools_of(WhoAmI)) == ["who_am_i_get", "who_am_i_post"]


def test_list_schema_from_filters_and_pagination():
    listing = tools_of(VolumeViewSet, ["list"])["volume_list"].definition()
    props = listing["inputSchema"]["properties"]
    assert list(props) == ["search", "ordering", "page"]
    assert props["page"]["type"] == "integer"
    assert "Looked for in: title, writer__name." in props["search"]["description"]
    assert "title, pages" in props["ordering"]["description"]
    assert listing["inputSchema"]["additionalProperties"] is False
    output = listing["outputSchema"]
    assert set(output["properties"]) == {"results", "count", "next", "previous"}
    assert output["properties"]["results"]["items"]["properties"]["writer"] == {"type": "integer"}
    assert list(tools_of(EntryList)["entry_list"].input_schema["properties"]) == ["cursor"]
    assert list(tools_of(WriterViewSet, ["list"])["writer_list"].input_schema["properties"]) == ["limit", "offset"]


def test_detail_and_body_schemas():
    tools = tools_of(VolumeViewSet)
    retrieve = tools["volume_retrieve"].input_schema
    assert retrieve == {"type": "object", "properties": {"pk": {"type": "integer", "description": "The id of the volume."}},
                        "required": ["pk"], "additionalProperties": False}
    create = tools["volume_create"].input_schema
    assert create["required"] == ["title", "writer"] and "id" not in create["properties"]
    assert tools["volume_update"].input_schema["required"] == ["pk", "title", "writer"]
    assert tools["volume_partial_update"].input_schema["required"] == ["pk"]  # PATCH: every field optional
    assert "outputSchema" not in tools["volume_destroy"].definition()
    # A lookup named like a writable field gives way: the field keeps its name for the body.
    writers = tools_of(WriterViewSet)
    assert list(writers["writer_retrieve"].input_schema["properties"]) == ["slug"]
    assert list(writers["writer_update"].input_schema["properties"]) == ["current_slug", "name", "slug"]


def test_registration_errors():
    with pytest.raises(ImproperlyConfigured, match="has no action 'publish'"):
        view_tools(VolumeViewSet, ["publish"])
    with pytest.raises(TypeError, match="unknown option 'title'"):
        view_tools(VolumeViewSet, ["list"], title="Books")
    with pytest.raises(TypeError, match="APIView or ViewSet class"):
        view_tools(Volume, ["list"])


def test_register_view_on_a_site_is_all_or_nothing():
    site = McpSite()
    added = register_view(VolumeViewSet, actions=["list", "retrieve"], site=site)
    assert [tool.name for tool in added] == [tool.name for tool in site.tools] == ["volume_list", "volume_retrieve"]
    with pytest.raises(AlreadyRegistered):
        register_view(VolumeViewSet, actions=["create", "retrieve"], site=site)
    assert [tool.name for tool in site.tools] == ["volume_list", "volume_retrieve"]  # volume_create withdrawn


# Calls through the view ------------------------------------------------------------------------------


async def test_list_paginates_filters_and_orders(catalogue, people):
    listing = tools_of(VolumeViewSet, ["list"], path="/api/volumes/")["volume_list"]
    first = await listing.run({}, ctx(people["reader"]))
    assert first["isError"] is False
    page = first["structuredContent"]
    assert page["count"] == 4  # the secret volume is outside the view's queryset
    assert [row["title"] for row in page["results"]] == ["A Wizard of Earthsea", "Invisible Cities"]
    assert page["next"] == "https://127.0.0.1/api/volumes/?page=2"
    assert json.loads(first["content"][0]["text"]) == page
    jsonschema.validate(page, listing.output_schema)

    second = await listing.run({"page": 2}, ctx(people["reader"]))
    assert [row["title"] for row in second["structuredContent"]["results"]] == ["The Baron in the Trees",
                                                                                "The Tombs of Atuan"]
    found = await listing.run({"search": "calvino", "ordering": "-pages"}, ctx(people["reader"]))
    assert [row["title"] for row in found["structuredContent"]["results"]] == ["The Baron in the Trees",
                                                                               "Invisible Cities"]
    missing = await listing.run({"page": 9}, ctx(people["reader"]))
    assert missing == {"content": [{"type": "text", "text": "Not Found (404): Invalid page."}], "isError": True}


async def test_cursor_pagination(people):
    await Entry.objects.abulk_create([Entry(number=n) for n in range(5)])
    listing = tools_of(EntryList)["entry_list"]
    first = (await listing.run({}, ctx()))["structuredContent"]
    assert [row["number"] for row in first["results"]] == [0, 1, 2] and "count" not in first
    cursor = first["next"].split("cursor=")[1]
    second = (await listing.run({"cursor": cursor}, ctx()))["structuredContent"]
    assert [row["number"] for row in second["results"]] == [3, 4] and second["next"] is None


async def test_retrieve_by_lookup(catalogue, people):
    tools = tools_of(VolumeViewSet, ["retrieve"])
    volume = catalogue["Invisible Cities"]
    found = await tools["volume_retrieve"].run({"pk": volume.pk}, ctx(people["reader"]))
    assert found["structuredContent"]["title"] == "Invisible Cities"
    assert found["structuredContent"]["price"] == "9.99"
    secret = await Volume.objects.aget(secret=True)
    hidden = await tools["volume_retrieve"].run({"pk": secret.pk}, ctx(people["reader"]))
    assert hidden == {"content": [{"type": "text", "text": "Not Found (404): No Volume matches the given query."}],
                      "isError": True}
    missing = await tools["volume_retrieve"].run({}, ctx(people["reader"]))
    assert missing["content"][0]["text"] == "Invalid arguments for tool volume_retrieve: pk: This field is required."
    writer = await tools_of(WriterViewSet, ["retrieve"])["writer_retrieve"].run({"slug": "calvino"}, ctx())
    assert writer["structuredContent"]["name"] == "Italo Calvino"


async def test_the_views_permission_classes_apply(catalogue, people):
    tools = tools_of(VolumeViewSet)
    writer = await Writer.objects.aget(slug="calvino")
    new = {"title": "Cosmicomics", "writer": writer.pk, "pages": 153}
    anonymous = await tools["volume_list"].run({}, ctx(AnonymousUser()))
    assert anonymous == {"content": [{"type": "text", "text": "Forbidden (403): Authentication credentials were "
                                                              "not provided."}], "isError": True}
    refused = await tools["volume_create"].run(new, ctx(people["reader"]))
    assert refused == {"content": [{"type": "text", "text": "Forbidden (403): Only staff may change the catalogue."}],
                       "isError": True}
    assert not await Volume.objects.filter(title="Cosmicomics").aexists()

    created = await tools["volume_create"].run(new, ctx(people["staff"]))
    assert created["isError"] is False
    assert created["structuredContent"]["title"] == "Cosmicomics" and created["structuredContent"]["pages"] == 153
    jsonschema.validate(created["structuredContent"], tools["volume_create"].output_schema)
    pk = created["structuredContent"]["id"]
    patched = await tools["volume_partial_update"].run({"pk": pk, "pages": 160}, ctx(people["staff"]))
    assert patched["structuredContent"]["pages"] == 160
    deleted = await tools["volume_destroy"].run({"pk": pk}, ctx(people["staff"]))
    assert deleted == {"content": [{"type": "text", "text": "Done: 204 No Content."}], "isError": False}
    assert not await Volume.objects.filter(pk=pk).aexists()


async def test_the_views_validation_errors_are_is_error(catalogue, people):
    tools = tools_of(VolumeViewSet)
    result = await tools["volume_create"].run({"title": "", "writer": 999999, "price": "1.999"}, ctx(people["staff"]))
    assert result["isError"] is True and "structuredContent" not in result
    text = result["content"][0]["text"]
    assert text.startswith("Bad Request (400): ")
    assert "title: This field may not be blank." in text
    assert 'writer: Invalid pk "999999" - object does not exist.' in text
    assert "price: Ensure that there are no more than 2 decimal places." in text
    unknown = await tools["volume_create"].run({"title": "X", "writer": 1, "isbn": "123"}, ctx(people["staff"]))
    assert unknown["content"][0]["text"].startswith("Invalid arguments for tool volume_create: isbn: not an argument")
    stray = await tools["volume_retrieve"].run({"pk": 1, "search": "x"}, ctx(people["staff"]))
    assert "search: not an argument of this tool (arguments: pk)" in stray["content"][0]["text"]


async def test_the_views_throttle_applies(people):
    listing = tools_of(EntryList)["entry_list"]
    for _ in range(2):
        assert (await listing.run({}, ctx(people["reader"])))["isError"] is False
    throttled = await listing.run({}, ctx(people["reader"]))
    assert throttled["isError"] is True
    text = throttled["content"][0]["text"]
    assert text.startswith("Too Many Requests (429): Request was throttled. Expected available in ")
    assert text.endswith(" seconds.") and "Retry after 60 seconds." in text
    # The rate is per user, as for the view's REST clients.
    assert (await listing.run({}, ctx(people["staff"])))["isError"] is False


async def test_lookup_rename_and_extra_action(catalogue, people):
    writers = tools_of(WriterViewSet)
    renamed = await writers["writer_partial_update"].run({"current_slug": "calvino", "slug": "italo-calvino"}, ctx())
    assert renamed["structuredContent"] == {"id": renamed["structuredContent"]["id"], "name": "Italo Calvino",
                                            "slug": "italo-calvino"}
    assert await Writer.objects.filter(slug="italo-calvino").aexists()

    volume = catalogue["Invisible Cities"]
    await Volume.objects.filter(pk=volume.pk).aupdate(in_print=False)
    reprint = tools_of(VolumeViewSet, ["reprint"])["volume_reprint"]
    assert reprint.title == "Reprint" and "Put a volume back in print." in reprint.description
    assert reprint.input_schema["required"] == ["pk"]
    refused = await reprint.run({"pk": volume.pk}, ctx(people["reader"]))
    assert refused["content"][0]["text"] == "Forbidden (403): Only staff may change the catalogue."
    done = await reprint.run({"pk": volume.pk}, ctx(people["staff"]))
    assert done["structuredContent"] == {"id": volume.pk, "in_print": True, "by": "staff"}
    assert (await Volume.objects.aget(pk=volume.pk)).in_print is True


async def test_the_view_sees_the_mcp_user_and_credential(people):
    tools = tools_of(WhoAmI)
    key = ApiKey("reader-key", frozenset({"mcp:read"}))
    seen = await tools["who_am_i_get"].run({"shelf": "top", "n": 2, "all": True}, ctx(people["reader"], key))
    assert seen["structuredContent"] == {"user": "reader", "auth": "reader-key", "via_mcp": True,
                                         "query": {"shelf": "top", "n": "2", "all": "true"}}
    posted = await tools["who_am_i_post"].run({"note": {"a": [1, 2]}}, ctx(people["reader"]))
    assert posted["structuredContent"] == {"received": {"note": {"a": [1, 2]}}}
    anonymous = await tools["who_am_i_get"].run({}, ctx())
    assert anonymous["isError"] is True and "(403)" in anonymous["content"][0]["text"]


def test_rest_clients_are_unchanged(people):
    """The MCP authentication exists only in the tools' calls; a REST request authenticates as before."""
    view_tools(WhoAmI)
    assert McpUserAuthentication not in WhoAmI.authentication_classes
    factory = APIRequestFactory()
    assert WhoAmI.as_view()(factory.get("/whoami/")).status_code == 403
    # Even in a chain that has it, the class recognises only the Context a tool call attaches, never a
    # header a client could send.
    forged = Request(factory.get("/whoami/", HTTP_X_API_KEY="staff-key", HTTP_MCP_CONTEXT="staff"))
    assert McpUserAuthentication().authenticate(forged) is None
    called = factory.get("/whoami/")
    called.mcp_context = Context(ctx(people["staff"], "token"))
    assert McpUserAuthentication().authenticate(Request(called)) == (people["staff"], "token")
    called.mcp_context = Context(ctx(AnonymousUser()))
    assert McpUserAuthentication().authenticate(Request(called)) is None


async def test_server_errors_are_generic(caplog):
    tools = tools_of(BrokenView)
    with caplog.at_level("ERROR", logger="django_mcp.tools"):
        unavailable = await tools["broken_get"].run({}, ctx())
        crashed = await tools["broken_delete"].run({}, ctx())
    assert unavailable == {"content": [{"type": "text", "text": "Tool broken_get failed with an internal error."}],
                           "isError": True}
    assert crashed == {"content": [{"type": "text", "text": "Tool broken_delete failed with an internal error."}],
                       "isError": True}
    assert "db.internal" in caplog.text and "secret connection string" in caplog.text  # logged, never sent


# Over a real transport -------------------------------------------------------------------------------


async def test_a_view_tool_over_streamable_http(catalogue, people):
    site = McpSite()
    register_view(VolumeViewSet, actions=["list", "create"], path="/api/volumes/", site=site)
    app = McpHttpConsumer.as_asgi(site=site)

    async def post(method: str, params: dict[str, Any], key: str, name: str | None = None) -> dict[str, Any]:
        status, answer = await modern_http.post(app, method, params, key, name)
        assert status == 200, answer
        return answer["result"]

    listed = await post("tools/list", {}, "reader-key")
    definitions = {tool["name"]: tool for tool in listed["tools"]}
    assert definitions["volume_list"]["annotations"] == {"readOnlyHint": True}
    assert definitions["volume_create"]["inputSchema"]["required"] == ["title", "writer"]

    page = await post("tools/call", {"name": "volume_list", "arguments": {"search": "earthsea"}}, "reader-key",
                      "volume_list")
    assert page["isError"] is False
    assert [row["title"] for row in page["structuredContent"]["results"]] == ["A Wizard of Earthsea"]
    writer = await Writer.objects.aget(slug="le-guin")
    refused = await post("tools/call", {"name": "volume_create", "arguments": {"title": "Tehanu", "writer": writer.pk}},
                         "reader-key", "volume_create")
    assert refused["isError"] is True and "structuredContent" not in refused
    assert refused["content"] == [{"type": "text", "text": "Forbidden (403): Only staff may change the catalogue."}]
    created = await post("tools/call", {"name": "volume_create", "arguments": {"title": "Tehanu", "writer": writer.pk}},
                         "staff-key", "volume_create")
    assert created["structuredContent"]["title"] == "Tehanu"
    assert await Volume.objects.filter(title="Tehanu", writer=writer).aexists()
