"""
Query tools staff define in the admin (django_mcp/tools/query_*.py): generated schemas, checks on save, filters,
signed-cursor pages, permissions and row-level rules, the admin with list_changed, and a call over HTTP in process.
"""

import asyncio
import datetime
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.urls import path

from django_mcp.fanout import BROADCAST_GROUP
from django_mcp.query_tools.models import McpQueryTool
from django_mcp.tool_admin.models import McpTool
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era
from django_mcp.sites import McpSite
from django_mcp.query_tools import admin as query_admin  # noqa: F401  (registers the admin)
from django_mcp.query_tools.source import add_query_tool_source
from django_mcp.query_tools.tools import QueryTool
from django_mcp.transports.http import McpHttpConsumer
from tests.catalogue.mcp import VolumeResource
from tests.catalogue.models import Entry, Tag, Volume, Writer
from tests.tools import modern_http

pytestmark = pytest.mark.django_db(transaction=True)

# The admin's URLs, read after this module registered McpQueryToolAdmin (see the admin tests).
urlpatterns = [path("admin/", admin.site.urls)]


def request(user: Any = None, method: str = "tools/call") -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user, method=method)


def content_type(model: Any) -> ContentType:
    return ContentType.objects.get_for_model(model)


@pytest.fixture
def plain_site() -> McpSite:
    """A site that publishes no model: query tools read ``values()``."""
    site = McpSite("query-plain")
    add_query_tool_source(site)
    return site


@pytest.fixture
def resource_site() -> McpSite:
    """A site publishing volumes with the catalogue's row-level rules (secret volumes for their owner only)."""
    site = McpSite("query-resources")
    site.register(Volume, VolumeResource)
    site.register(Writer, fields=["name", "slug"], lookup_field="slug")
    add_query_tool_source(site)
    return site


def make_data() -> dict[str, Any]:
    view = Permission.objects.get(codename="view_volume")
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    for user in (alice, bob):
        user.user_permissions.add(view, Permission.objects.get(codename="view_entry"))
    User.objects.create_user("nobody")
    le_guin = Writer.objects.create(name="Ursula K. Le Guin", slug="le-guin")
    calvino = Writer.objects.create(name="Italo Calvino", slug="calvino")
    Volume.objects.create(title="A Wizard of Earthsea", writer=le_guin, pages=183, price=Decimal("12.50"),
                          published=datetime.date(1968, 11, 1), ref=uuid.UUID(int=1))
    Volume.objects.create(title="The Tombs of Atuan", writer=le_guin, pages=180, published=datetime.date(1970, 12, 1))
    Volume.objects.create(title="Invisible Cities", writer=calvino, pages=165, format=Volume.HARDBACK)
    Volume.objects.create(title="Alice's diary", writer=calvino, pages=20, secret=True, owner=alice)
    return {name: User.objects.get(username=name) for name in ("alice", "bob", "nobody")}


@pytest.fixture
async def users() -> dict[str, Any]:
    return await database_sync_to_async(make_data)()


def new_row(site: McpSite, model: Any = Volume, **fields: Any) -> McpQueryTool:
    return McpQueryTool(site=site.name, name=fields.pop("name", "find_volumes"), model=content_type(model),
                        fields=fields.pop("fields", ["title"]), **fields)


def save_row(site: McpSite, model: Any = Volume, **fields: Any) -> McpQueryTool:
    row = new_row(site, model, **fields)
    row.full_clean()
    row.save()
    return row


async def call(site: McpSite, user: Any, arguments: dict[str, Any], name: str = "find_volumes") -> dict[str, Any]:
    return await site.call_tool(name, arguments, request(user))


async def tool_names(site: McpSite, user: Any) -> list[str]:
    page = await site.list_tools(None, request(user, "tools/list"))
    return [tool["name"] for tool in page.items]


# Schemas --------------------------------------------------------------------------------------------


def test_input_schema_per_lookup(plain_site):
    row = McpQueryTool(site=plain_site.name, name="q", model=content_type(Volume), fields=["id"], filters={
        "title": ["exact", "iexact", "contains", "icontains", "in"], "pages": ["gt", "gte", "lt", "lte", "range"],
        "published": ["isnull", "range"], "price": ["exact"], "writer": ["exact"], "format": ["exact", "in"],
        "ref": ["exact"]})
    properties = QueryTool(row, plain_site).input_schema["properties"]
    schemas = {name: {k: v for k, v in schema.items() if k != "description"} for name, schema in properties.items()}
    assert schemas["title"] == {"type": "string", "maxLength": 200}
    for name in ("title__iexact", "title__contains", "title__icontains"):
        assert schemas[name] == {"type": "string"}
    assert schemas["title__in"] == {"type": "array", "items": {"type": "string", "maxLength": 200}}
    for name in ("pages__gt", "pages__gte", "pages__lt", "pages__lte"):
        assert schemas[name] == {"type": "integer", "minimum": 0}
    assert schemas["pages__range"] == {"type": "array", "items": {"type": "integer", "minimum": 0},
                                       "minItems": 2, "maxItems": 2}
    assert schemas["published__isnull"] == {"type": "boolean"}
    assert schemas["published__range"]["items"] == {"type": "string", "format": "date"}
    assert schemas["price"] == {"type": "string", "format": "decimal"}
    assert schemas["writer"] == {"type": "integer"}  # a relation is filtered by the related key
    assert schemas["format"] == {"type": "string", "enum": ["hb", "pb"], "maxLength": 2}
    assert schemas["format__in"]["items"]["enum"] == ["hb", "pb"]
    assert schemas["ref"] == {"type": "string", "format": "uuid"}
    assert schemas["cursor"] == {"type": "string"}
    assert properties["pages__range"]["description"] == "Pages between (inclusive), as [low, high]."


def test_definition_output_schema_and_annotations(plain_site, resource_site):
    row = McpQueryTool(site=plain_site.name, name="q", title="Find", model=content_type(Volume),
                       fields=["id", "writer", "price", "published"])
    definition = QueryTool(row, plain_site).definition()
    assert definition["annotations"] == {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                                         "openWorldHint": False}
    assert definition["title"] == "Find" and definition["inputSchema"]["additionalProperties"] is False
    output = definition["outputSchema"]
    assert output["required"] == ["rows"] and output["properties"]["nextCursor"]["type"] == "string"
    item = output["properties"]["rows"]["items"]
    assert item["required"] == ["id", "writer", "price", "published"]
    assert item["properties"]["writer"] == {"type": "integer"}  # values() gives the key
    assert item["properties"]["published"] == {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}
    row.site = resource_site.name
    linked = QueryTool(row, resource_site).output_schema["properties"]["rows"]["items"]["properties"]
    assert linked["writer"] == {"type": "string", "format": "uri"}  # the resource links published writers


# Checks on save ------------------------------------------------------------------------------------------


def errors_of(site: McpSite, model: Any = Volume, **fields: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as info:
        new_row(site, model, **fields).full_clean()
    return info.value.message_dict


def test_rows_are_checked_against_the_model(plain_site, resource_site):
    assert "letters, digits" in errors_of(plain_site, name="two words")["name"][0]
    assert "Not a field" in errors_of(plain_site, fields=["title", "nope"])["fields"][0]
    assert "non-empty list" in errors_of(plain_site, fields={"title": True})["fields"][0]
    filters = errors_of(plain_site, filters={"title": ["startswith"], "pages": ["icontains"], "in_print": ["gt"],
                                             "title__x": ["exact"], "extra": ["exact"]})["filters"]
    assert any("unknown lookup 'startswith'" in e for e in filters)
    assert any("icontains is for text fields" in e for e in filters)
    assert any("gt does not apply to a boolean" in e for e in filters)
    assert sum("not a field this tool may filter on" in e for e in filters) == 2  # title__x, and a JSON field
    assert "isnull needs a field that allows NULL" in errors_of(plain_site, filters={"pages": ["isnull"]})["filters"][0]
    assert "Cannot order by nope" in errors_of(plain_site, ordering=["-nope"])["ordering"][0]
    assert "twice" in errors_of(plain_site, ordering=["title", "-title"])["ordering"][0]
    assert "100" in errors_of(plain_site, row_limit=101)["row_limit"][0]
    # What the ModelResource keeps out (secret, owner) is out of reach; models it does not publish too.
    assert "Not a field" in errors_of(resource_site, fields=["title", "secret"])["fields"][0]
    assert "does not publish catalogue.Tag" in errors_of(resource_site, model=Tag, fields=["name"])["model"][0]
    assert "would never be served" in errors_of(resource_site, name="search_volume")["name"][0]


def test_a_name_is_unique_per_site(plain_site):
    save_row(plain_site, name="twice")
    with pytest.raises(ValidationError):
        save_row(plain_site, name="twice")
    save_row(McpSite("elsewhere"), name="twice")  # another site may have it


def test_a_rename_orphans_the_old_tool_row(plain_site):
    save_row(plain_site, name="old_name")
    row = McpQueryTool.objects.get(name="old_name")  # loaded, as the admin loads it
    row.name = "new_name"
    row.save()
    rows = {tool.name: tool for tool in McpTool.objects.filter(site=plain_site.name)}
    assert rows["old_name"].orphaned and not rows["new_name"].orphaned
    assert {tool.source for tool in rows.values()} == {McpTool.ADMIN}


# Calls -----------------------------------------------------------------------------------------------------


async def test_filters_apply_and_values_are_json_safe(plain_site, users):
    await database_sync_to_async(save_row)(plain_site, fields=["title", "price", "published", "ref", "writer"],
                                           filters={"title": ["icontains"], "pages": ["range"],
                                                    "published": ["isnull"]}, ordering=["title"])
    result = await call(plain_site, users["bob"], {"title__icontains": "THE", "published__isnull": False})
    assert result["isError"] is False
    rows = result["structuredContent"]["rows"]
    assert [r["title"] for r in rows] == ["The Tombs of Atuan"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    earthsea = (await call(plain_site, users["bob"], {"pages__range": [181, 200]}))["structuredContent"]["rows"]
    writer = await Writer.objects.aget(slug="le-guin")
    assert earthsea == [{"title": "A Wizard of Earthsea", "price": "12.50", "published": "1968-11-01",
                         "ref": "00000000-0000-0000-0000-000000000001", "writer": writer.pk}]
    # Without a ModelResource nothing hides the secret volume from who may view volumes.
    assert len((await call(plain_site, users["bob"], {}))["structuredContent"]["rows"]) == 4


async def test_bad_arguments_are_a_tool_error(plain_site, users):
    await database_sync_to_async(save_row)(plain_site, filters={"pages": ["gte", "range"], "title": ["icontains"]})
    for arguments, message in (({"pages__gte": "many"}, "pages__gte:"), ({"pages__range": [1]}, "two values"),
                               ({"title__icontains": 3}, "a string is expected"), ({"colour": "red"}, "colour")):
        result = await call(plain_site, users["bob"], arguments)
        assert result["isError"] is True, arguments
        assert message in result["content"][0]["text"]


async def page_through(site: McpSite, user: Any, arguments: dict[str, Any], name: str) -> list[list[Any]]:
    pages, cursor = [], None
    while True:
        result = await call(site, user, {**arguments, **({"cursor": cursor} if cursor else {})}, name)
        pages.append(result["structuredContent"]["rows"])
        cursor = result["structuredContent"].get("nextCursor")
        if cursor is None:
            return pages


async def test_keyset_pages_respect_the_row_limit(plain_site, users):
    await Entry.objects.abulk_create([Entry(number=n) for n in range(8)])
    await database_sync_to_async(save_row)(plain_site, Entry, name="entries", fields=["number"],
                                           filters={"number": ["gte"]}, ordering=["-number"], row_limit=3)
    pages = await page_through(plain_site, users["bob"], {"number__gte": 1}, "entries")
    assert [[row["number"] for row in page] for page in pages] == [[7, 6, 5], [4, 3, 2], [1]]


async def test_offset_pages_when_the_ordering_allows_null(plain_site, users):
    # published is nullable, so keyset pagination cannot seek past it: the tool pages by offset.
    await database_sync_to_async(save_row)(plain_site, name="by_date", fields=["title"],
                                           ordering=["published", "title"], row_limit=3)
    pages = await page_through(plain_site, users["bob"], {}, "by_date")
    assert [len(page) for page in pages] == [3, 1]
    titles = [row["title"] for page in pages for row in page]
    assert sorted(titles) == sorted(await database_sync_to_async(lambda: list(
        Volume.objects.values_list("title", flat=True)))())


async def test_a_cursor_is_bound_to_its_tool_and_arguments(plain_site, users):
    await Entry.objects.abulk_create([Entry(number=n) for n in range(5)])
    await database_sync_to_async(save_row)(plain_site, Entry, name="entries", fields=["number"],
                                           filters={"number": ["gte"]}, row_limit=2)
    await database_sync_to_async(save_row)(plain_site, Entry, name="others", fields=["number"],
                                           filters={"number": ["gte"]}, row_limit=2)
    first = await call(plain_site, users["bob"], {"number__gte": 0}, "entries")
    cursor = first["structuredContent"]["nextCursor"]
    second = await call(plain_site, users["bob"], {"number__gte": 0, "cursor": cursor}, "entries")
    assert [row["number"] for row in second["structuredContent"]["rows"]] == [2, 3]
    refused = [({"number__gte": 1, "cursor": cursor}, "entries"), ({"number__gte": 0, "cursor": cursor}, "others"),
               ({"number__gte": 0, "cursor": cursor[:-2] + "xx"}, "entries"), ({"cursor": "made-up"}, "entries")]
    for arguments, name in refused:
        with pytest.raises(InvalidParams):
            await call(plain_site, users["bob"], arguments, name)


# Permissions and row-level rules -------------------------------------------------------------------------------


async def test_without_the_view_permission_it_is_neither_listed_nor_callable(plain_site, users):
    row = await database_sync_to_async(save_row)(plain_site)
    assert await tool_names(plain_site, users["bob"]) == ["find_volumes"]
    for user in (users["nobody"], None):
        assert await tool_names(plain_site, user) == []
        with pytest.raises(InvalidParams, match="Unknown tool"):
            await call(plain_site, user, {})
    row.enabled = False
    await row.asave()
    assert await tool_names(plain_site, users["bob"]) == []  # disabled: served to nobody


async def test_row_level_rules_of_the_model_resource_apply(resource_site, users):
    await database_sync_to_async(save_row)(resource_site, fields=["title", "writer"], ordering=["title"])
    titles = {name: [row["title"] for row in (await call(resource_site, users[name], {}))["structuredContent"]["rows"]]
              for name in ("alice", "bob")}
    assert titles["bob"] == ["A Wizard of Earthsea", "Invisible Cities", "The Tombs of Atuan"]
    assert titles["alice"] == ["A Wizard of Earthsea", "Alice's diary", "Invisible Cities", "The Tombs of Atuan"]
    rows = (await call(resource_site, users["bob"], {}))["structuredContent"]["rows"]
    assert rows[0] == {"title": "A Wizard of Earthsea", "writer": "catalogue://writer/le-guin"}  # the serializer's


# The admin ------------------------------------------------------------------------------------------------------


async def listen() -> tuple[Any, str]:
    """A channel in the broadcast group, where list_changed notifications travel to every stream."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(BROADCAST_GROUP, channel)
    return layer, channel


async def heard(listener: tuple[Any, str], found: list[str] | None = None) -> list[str]:
    found = [] if found is None else found
    try:
        found.append((await asyncio.wait_for(listener[0].receive(listener[1]), 0.3))["message"]["method"])
    except TimeoutError:
        return found
    return await heard(listener, found)


@pytest.fixture
async def staff(async_client):
    user = await database_sync_to_async(User.objects.create_superuser)("staff", "staff@example.com", "pw")
    await async_client.aforce_login(user)
    return async_client


@pytest.mark.urls(__name__)
async def test_the_admin_adds_a_tool_that_is_served(staff, resource_site, users):
    listener = await listen()
    volume = await database_sync_to_async(content_type)(Volume)
    response = await staff.post("/admin/django_mcp_query_tools/mcpquerytool/add/", {
        "site": resource_site.name, "name": "volumes_by_title", "title": "Volumes by title", "description": "",
        "model": volume.pk, "fields": '["title", "pages"]', "filters": '{"title": ["icontains"]}',
        "ordering": '["title"]', "row_limit": "2", "enabled": "on"})
    assert response.status_code == 302, response.content.decode()[:3000]
    assert await heard(listener) == ["notifications/tools/list_changed"]
    tool_row = await McpTool.objects.aget(site=resource_site.name, name="volumes_by_title")
    assert tool_row.source == McpTool.ADMIN and not tool_row.orphaned
    rows = (await call(resource_site, users["bob"], {"title__icontains": "i"}, "volumes_by_title"))["structuredContent"]
    assert [row["title"] for row in rows["rows"]] == ["A Wizard of Earthsea", "Invisible Cities"]
    row = await McpQueryTool.objects.aget(name="volumes_by_title")
    change = (await staff.get(f"/admin/django_mcp_query_tools/mcpquerytool/{row.pk}/change/")).content.decode()
    assert "title__icontains" in change and "nextCursor" in change  # the generated schemas, read-only
    await row.adelete()
    assert await heard(listener) == ["notifications/tools/list_changed"]
    assert (await McpTool.objects.aget(pk=tool_row.pk)).orphaned


@pytest.mark.urls(__name__)
async def test_the_admin_offers_published_models_and_shows_errors(staff, resource_site):
    tag, volume = [await database_sync_to_async(content_type)(model) for model in (Tag, Volume)]
    page = (await staff.get("/admin/django_mcp_query_tools/mcpquerytool/add/", {"site": resource_site.name})).content.decode()
    # The choices follow the site asked for: it publishes volumes and writers, not tags.
    assert f'<option value="{volume.pk}">' in page and f'<option value="{tag.pk}">' not in page
    invalid = await staff.post("/admin/django_mcp_query_tools/mcpquerytool/add/", {
        "site": resource_site.name, "name": "bad", "model": tag.pk, "fields": '["name"]', "filters": "{}",
        "ordering": "[]", "row_limit": "10"})
    assert invalid.status_code == 200 and "Select a valid choice" in invalid.content.decode()
    invalid = await staff.post("/admin/django_mcp_query_tools/mcpquerytool/add/", {
        "site": resource_site.name, "name": "bad", "model": volume.pk, "fields": '["secret"]',
        "filters": '{"pages": ["icontains"]}', "ordering": "[]", "row_limit": "10"})
    html = invalid.content.decode()
    assert invalid.status_code == 200 and "Not a field this tool may return" in html and "is for text fields" in html
    assert not await McpQueryTool.objects.filter(name="bad").aexists()


# Over HTTP ---------------------------------------------------------------------------------------------------


async def test_a_call_over_the_http_consumer(resource_site, users):
    await database_sync_to_async(save_row)(resource_site, fields=["title"], filters={"pages": ["gte"]},
                                           ordering=["title"], row_limit=1)
    app = McpHttpConsumer.as_asgi(site=resource_site)

    async def post(name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return await modern_http.post(app, "tools/call", {"name": name, "arguments": arguments}, "alice-key", name)

    status, first = await post("find_volumes", {"pages__gte": 20})
    assert (status, first["result"]["structuredContent"]["rows"]) == (200, [{"title": "A Wizard of Earthsea"}])
    cursor = first["result"]["structuredContent"]["nextCursor"]
    status, second = await post("find_volumes", {"pages__gte": 20, "cursor": cursor})
    assert second["result"]["structuredContent"]["rows"] == [{"title": "Alice's diary"}]  # alice owns it
    # A cursor of other arguments: invalid params, which 2026-07-28 answers with HTTP 400.
    status, foreign = await post("find_volumes", {"pages__gte": 21, "cursor": cursor})
    assert (status, foreign["error"]["code"]) == (400, -32602)

