"""
ModelResource in process, on the catalogue site (tests/catalogue/mcp.py): listing, reading,
templates, schema, completion, files, permissions, cache hints and the generated tools. The same
behaviour over real HTTP with the SDK client is in ``test_options_live.py``.
"""

import base64
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_mcp.backend import handle
from django_mcp.permissions import AllowAny
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams, ResourceNotFound
from django_mcp.protocol.versions import Era
from django_mcp.model_resources import ModelResource
from django_mcp.model_resources.primitives import ModelRowSource
from django_mcp.sites import McpSite
from tests.catalogue.models import Entry, Tag, Volume, Writer
from tests.catalogue.sites import site


pytestmark = pytest.mark.django_db(transaction=True)

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def ctx(user: Any = None, method: str = "resources/list", modern: bool = False) -> RequestContext:
    return RequestContext(era=Era.MODERN if modern else Era.LEGACY,
                          protocol_version="2026-07-28" if modern else "2025-11-25", user=user, method=method)


def make_catalogue() -> dict[str, Any]:
    alice = User.objects.create_user("alice")
    bob = User.objects.create_user("bob")
    nobody = User.objects.create_user("nobody")  # no view permission
    view = Permission.objects.get(codename="view_volume")
    alice.user_permissions.add(view)
    bob.user_permissions.add(view)
    le_guin = Writer.objects.create(name="Ursula K. Le Guin", slug="le-guin")
    calvino = Writer.objects.create(name="Italo Calvino", slug="calvino")
    sf = Tag.objects.create(name="sf")
    earthsea = Volume.objects.create(title="A Wizard of Earthsea", writer=le_guin, pages=183, extra={"series": [1, 6]})
    earthsea.tags.add(sf)
    cities = Volume.objects.create(title="Invisible Cities", writer=calvino, pages=165, format=Volume.HARDBACK)
    diary = Volume.objects.create(title="Alice's diary", writer=calvino, secret=True, owner=alice)
    return {"alice": User.objects.get(pk=alice.pk), "bob": User.objects.get(pk=bob.pk),
            "nobody": User.objects.get(pk=nobody.pk), "earthsea": earthsea, "cities": cities, "diary": diary}


@pytest.fixture
async def data() -> dict[str, Any]:
    return await database_sync_to_async(make_catalogue)()


async def listing(user: Any, prefix: str = "catalogue://volume/") -> list[str]:
    uris, cursor = [], None
    while True:
        page = await site.list_resources(cursor, ctx(user))
        uris += [item["uri"] for item in page.items
                 if item["uri"].startswith(prefix) and not item["uri"].endswith("$schema")]
        if (cursor := page.next_cursor) is None:
            return uris


async def read(uri: str, user: Any = None, modern: bool = False) -> list[dict[str, Any]]:
    request = ctx(user, "resources/read", modern)
    contents = await site.read_resource(uri, request)
    return contents if not modern else (contents, request.cache_hints)


# Listing and reading -----------------------------------------------------------------------------


async def test_rows_are_listed_in_order_for_who_may_see_them(data):
    uri = "catalogue://volume/{}".format
    visible = [uri(data["earthsea"].pk), uri(data["cities"].pk)]
    assert await listing(data["bob"]) == visible
    assert await listing(data["alice"]) == [visible[0], uri(data["diary"].pk), visible[1]]  # ordered by title
    assert await listing(data["nobody"]) == [] and await listing(None) == []
    page = await site.list_resources(None, ctx(data["bob"]))
    row = next(item for item in page.items if item["uri"] == visible[0])
    assert row == {"uri": visible[0], "name": "A Wizard of Earthsea", "mimeType": "application/json"}


async def test_a_row_reads_as_lossless_json_with_links_to_related_resources(data):
    earthsea = data["earthsea"]
    [contents] = await read(f"catalogue://volume/{earthsea.pk}", data["bob"])
    assert contents["mimeType"] == "application/json"
    row = json.loads(contents["text"])
    assert row["id"] == earthsea.pk and row["title"] == "A Wizard of Earthsea"
    assert row["writer"] == "catalogue://writer/le-guin"  # a link to its own resource, by slug
    sf = await Tag.objects.aget(name="sf")
    assert row["tags"] == [f"catalogue://tag/{sf.pk}"]
    assert row["price"] == "9.99" and row["ref"] == str(earthsea.ref) and row["extra"] == {"series": [1, 6]}
    assert row["added"].startswith(earthsea.added.astimezone().isoformat()[:10]) and row["format"] == "pb"
    assert "secret" not in row and "owner" not in row  # excluded
    [writer] = await read("catalogue://writer/le-guin")
    assert json.loads(writer["text"]) == {"id": earthsea.writer_id, "name": "Ursula K. Le Guin", "slug": "le-guin"}


async def test_every_common_field_type_reads_back_losslessly(data):
    import datetime
    from decimal import Decimal

    volume = data["cities"]
    volume.published = datetime.date(1972, 11, 1)
    volume.rating = 4.25
    volume.reading_time = datetime.timedelta(hours=3, minutes=5)
    volume.price = Decimal("12.50")
    volume.extra = {"translators": ["William Weaver"], "first": True, "n": None}
    await volume.asave()
    row = json.loads((await read(f"catalogue://volume/{volume.pk}", data["bob"]))[0]["text"])
    assert row["published"] == "1972-11-01" and row["rating"] == 4.25 and row["reading_time"] == "03:05:00"
    assert Decimal(row["price"]) == Decimal("12.50") and row["price"] == "12.50"
    assert row["extra"] == {"translators": ["William Weaver"], "first": True, "n": None}
    assert row["in_print"] is True and row["format"] == "hb" and row["pages"] == 165


async def test_lookup_values_are_percent_encoded_in_uris_and_decoded_when_read(data):
    odd = await Writer.objects.acreate(name="Flann O'Brien", slug="o'brien é/x")
    resource = site.get_model_options(Writer)
    uri = resource.get_object_uri(odd)
    assert uri == "catalogue://writer/o%27brien%20%C3%A9%2Fx"
    assert json.loads((await read(uri))[0]["text"])["name"] == "Flann O'Brien"


async def test_hidden_unknown_and_malformed_rows_are_all_not_found(data):
    diary = data["diary"]
    assert json.loads((await read(f"catalogue://volume/{diary.pk}", data["alice"]))[0]["text"])["title"] == "Alice's diary"
    for uri, user in [(f"catalogue://volume/{diary.pk}", data["bob"]),  # someone else's secret
                      (f"catalogue://volume/{data['earthsea'].pk}", data["nobody"]),  # no view permission
                      ("catalogue://volume/999999", data["bob"]), ("catalogue://volume/abc", data["bob"]),
                      ("catalogue://writer/nobody-here", None)]:
        with pytest.raises(ResourceNotFound):
            await read(uri, user)
    assert not await site.can_subscribe(f"catalogue://volume/{diary.pk}", ctx(data["bob"], "resources/subscribe"))
    assert await site.can_subscribe(f"catalogue://volume/{diary.pk}", ctx(data["alice"], "resources/subscribe"))
    assert await site.can_subscribe("catalogue://volume/$schema", ctx(data["bob"], "resources/subscribe"))


async def test_templates_and_schema_describe_the_model(data):
    templates = {t["uriTemplate"]: t for t in (await site.list_resource_templates(None, ctx(data["bob"]))).items}
    assert templates["catalogue://volume/{pk}"] == {
        "uriTemplate": "catalogue://volume/{pk}", "name": "volume", "title": "Volumes",
        "description": "A volume of the catalogue.", "mimeType": "application/json"}
    assert {"catalogue://volume/{pk}/scan", "catalogue://volume/{pk}/cover", "catalogue://writer/{slug}"} <= set(templates)
    # Nobody without the view permission is told the volume templates exist.
    hidden = {t["uriTemplate"] for t in (await site.list_resource_templates(None, ctx(data["nobody"]))).items}
    assert "catalogue://volume/{pk}" not in hidden and "catalogue://writer/{slug}" in hidden
    schema = json.loads((await read("catalogue://volume/$schema", data["bob"]))[0]["text"])
    fields = {field["name"]: field for field in schema["fields"]}
    assert schema["uriTemplate"] == "catalogue://volume/{pk}" and schema["ordering"] == ["title", "id"]
    assert fields["title"]["helpText"] == "The title on the cover."
    assert fields["format"]["choices"] == [{"value": "hb", "label": "Hardback"}, {"value": "pb", "label": "Paperback"}]
    assert fields["writer"]["relation"] == {"model": "catalogue.Writer", "many": False,
                                            "uriTemplate": "catalogue://writer/{slug}"}
    assert fields["price"]["schema"] == {"type": "string", "format": "decimal"}
    assert fields["published"]["nullable"] is True and "secret" not in fields


async def test_completion_comes_from_the_users_queryset(data):
    diary = data["diary"]

    async def complete(user: Any, value: str, uri: str = "catalogue://volume/{pk}") -> dict[str, Any]:
        return await site.complete({"type": "ref/resource", "uri": uri}, {"name": "pk", "value": value}, {},
                                   ctx(user, "completion/complete"))

    assert str(diary.pk) in (await complete(data["alice"], ""))["values"]
    assert str(diary.pk) not in (await complete(data["bob"], ""))["values"]
    assert (await complete(data["bob"], "9999"))["values"] == []
    slugs = await site.complete({"type": "ref/resource", "uri": "catalogue://writer/{slug}"},
                                {"name": "slug", "value": "LE"}, {}, ctx(None, "completion/complete"))
    assert slugs == {"values": ["le-guin"], "hasMore": False}
    await database_sync_to_async(Entry.objects.bulk_create)([Entry(number=n) for n in range(150)])
    many = await site.complete({"type": "ref/resource", "uri": "catalogue://entry/{pk}"},
                               {"name": "pk", "value": ""}, {}, ctx(None, "completion/complete"))
    pks = [int(v) for v in many["values"]]
    assert len(pks) == 100 and many["hasMore"] is True and pks == sorted(pks)


async def test_files_and_images_are_blobs_with_their_mime_type(data, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    earthsea = data["earthsea"]

    def attach() -> None:
        earthsea.scan.save("earthsea.pdf", ContentFile(b"%PDF-1.4 scan"), save=False)
        earthsea.cover.save("earthsea.png", ContentFile(PNG), save=False)
        earthsea.save()

    await database_sync_to_async(attach)()
    row = json.loads((await read(f"catalogue://volume/{earthsea.pk}", data["bob"]))[0]["text"])
    assert row["scan"] == f"catalogue://volume/{earthsea.pk}/scan"
    assert row["cover"] == f"catalogue://volume/{earthsea.pk}/cover"
    [scan] = await read(row["scan"], data["bob"])
    assert scan["mimeType"] == "application/pdf" and base64.b64decode(scan["blob"]) == b"%PDF-1.4 scan"
    [cover] = await read(row["cover"], data["bob"])
    assert cover["mimeType"] == "image/png" and base64.b64decode(cover["blob"]) == PNG
    with pytest.raises(ResourceNotFound):  # a row without a file there
        await read(f"catalogue://volume/{data['cities'].pk}/scan", data["bob"])
    with pytest.raises(ResourceNotFound):  # a row the user may not see
        await read(f"catalogue://volume/{data['diary'].pk}/scan", data["bob"])
    resource = site.get_model_options(Volume)
    resource.max_file_size = 4
    try:
        with pytest.raises(InvalidParams, match="more than this server serves"):
            await read(row["scan"], data["bob"])
    finally:
        resource.max_file_size = ModelResource.max_file_size


async def test_cache_hints_are_private_when_rows_depend_on_the_user(data):
    entry = await Entry.objects.acreate(number=1)
    _, hints = await read(f"catalogue://entry/{entry.pk}", modern=True)
    assert hints == {"ttlMs": 60000, "cacheScope": "public"}
    _, hints = await read(f"catalogue://volume/{data['earthsea'].pk}", data["bob"], modern=True)
    assert hints == {"ttlMs": 0, "cacheScope": "private"}
    _, hints = await read("catalogue://writer/le-guin", modern=True)
    assert hints["cacheScope"] == "public"


# Paging ------------------------------------------------------------------------------------------------


async def test_paging_many_rows_gives_each_once_with_one_query_per_page():
    await database_sync_to_async(Entry.objects.bulk_create)([Entry(number=n) for n in range(1234)])
    seen = await listing(None, "catalogue://entry/")
    assert len(seen) == 1234 and len(set(seen)) == 1234

    resource = site.get_model_options(Entry)
    source = ModelRowSource(resource)
    request = handle(ctx())

    def page_queries(position: Any) -> int:
        """Queries for one whole page of candidates: the rows, their names and positions."""
        with CaptureQueriesContext(connection) as queries:
            rows, more = source.page(request, position, 100)
        assert rows and len(rows) <= 100
        return len(queries)

    last = await database_sync_to_async(lambda: resource.keyset.position_of(Entry.objects.order_by("-pk")[5]))()
    assert await database_sync_to_async(page_queries)(None) == 1
    assert await database_sync_to_async(page_queries)(last) == 1


async def test_a_tampered_or_foreign_cursor_is_invalid_params():
    await database_sync_to_async(Entry.objects.bulk_create)([Entry(number=n) for n in range(150)])
    page = await site.list_resources(None, ctx())
    assert page.next_cursor
    for cursor in (page.next_cursor[:-2] + "xx", "garbage", (await site.list_tools(None, ctx())).next_cursor or "x"):
        with pytest.raises(InvalidParams):
            await site.list_resources(cursor, ctx())


async def test_a_smaller_page_size_of_a_model_ends_the_page_early():
    await database_sync_to_async(Entry.objects.bulk_create)([Entry(number=n) for n in range(30)])
    small = McpSite("small")
    small.register(Entry, fields="__all__", permission_classes=[AllowAny], page_size=12,
                   schema=False)
    sizes, cursor = [], None
    while True:
        page = await small.list_resources(cursor, ctx())
        sizes.append(len(page.items))
        if (cursor := page.next_cursor) is None:
            break
    assert sizes == [12, 12, 6]


# Tools -------------------------------------------------------------------------------------------------


async def call(name: str, arguments: dict[str, Any], user: Any) -> dict[str, Any]:
    return await site.call_tool(name, arguments, ctx(user, "tools/call"))


async def test_search_tool_filters_pages_and_links_rows(data):
    result = await call("search_volume", {"query": "calvino"}, data["alice"])
    titles = [row["title"] for row in result["structuredContent"]["results"]]
    assert titles == ["Alice's diary", "Invisible Cities"]
    assert [block["uri"] for block in result["content"] if block["type"] == "resource_link"] == [
        f"catalogue://volume/{data['diary'].pk}", f"catalogue://volume/{data['cities'].pk}"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    bob = await call("search_volume", {"query": "calvino"}, data["bob"])
    assert [row["title"] for row in bob["structuredContent"]["results"]] == ["Invisible Cities"]
    assert (await call("search_volume", {"format": "hb"}, data["bob"]))["structuredContent"]["results"][0]["title"] == \
        "Invisible Cities"
    assert [r["title"] for r in (await call("search_volume", {"pages__gte": 170}, data["bob"]))[
        "structuredContent"]["results"]] == ["A Wizard of Earthsea"]
    first = await call("search_volume", {"limit": 1}, data["alice"])
    cursor = first["structuredContent"]["nextCursor"]
    second = await call("search_volume", {"limit": 1, "cursor": cursor}, data["alice"])
    assert second["structuredContent"]["results"][0]["title"] == "Alice's diary"
    with pytest.raises(InvalidParams, match="another search"):
        await call("search_volume", {"limit": 1, "cursor": cursor, "query": "x"}, data["alice"])
    bad = await call("search_volume", {"limit": 1000, "colour": "red"}, data["alice"])
    assert bad["isError"] and "limit" in bad["content"][0]["text"] and "colour" in bad["content"][0]["text"]


async def test_get_tool_returns_what_reading_returns(data):
    earthsea = data["earthsea"]
    result = await call("get_volume", {"pk": earthsea.pk}, data["bob"])
    [contents] = await read(f"catalogue://volume/{earthsea.pk}", data["bob"])
    assert result["structuredContent"] == json.loads(contents["text"])
    hidden = await call("get_volume", {"pk": data["diary"].pk}, data["bob"])
    assert hidden["isError"] and "No volume with pk" in hidden["content"][0]["text"]


async def test_tools_are_hidden_from_users_without_the_view_permission(data):
    names = [tool["name"] for tool in (await site.list_tools(None, ctx(data["nobody"], "tools/list"))).items]
    assert "search_volume" not in names and "get_volume" not in names
    assert "search_volume" in [t["name"] for t in (await site.list_tools(None, ctx(data["bob"], "tools/list"))).items]
    with pytest.raises(InvalidParams, match="Unknown tool"):
        await call("get_volume", {"pk": data["earthsea"].pk}, data["nobody"])


async def test_use_admin_reuses_the_model_admins_queryset_and_permissions(data):
    admin_site = McpSite("admin-backed")
    admin_site.register(Volume, fields=["title"], use_admin=True, schema=False)
    request = ctx(data["bob"])
    page = await admin_site.list_resources(None, request)
    assert [item["name"] for item in page.items] == ["A Wizard of Earthsea", "Invisible Cities"]  # no secrets
    assert (await admin_site.list_resources(None, ctx(data["nobody"]))).items == []
    with pytest.raises(ResourceNotFound):
        await admin_site.read_resource(f"catalogue://volume/{data['diary'].pk}", ctx(data["alice"], "resources/read"))
    with pytest.raises(ImproperlyConfigured, match="not registered with"):
        McpSite().register(Writer, fields="__all__", use_admin=True)


# Configuration -------------------------------------------------------------------------------------------


def test_configuration_mistakes_are_explained():
    with pytest.raises(ImproperlyConfigured, match="needs `fields`"):
        McpSite().register(Writer)
    with pytest.raises(ImproperlyConfigured, match="lookup_field 'title' of catalogue.Volume must be unique"):
        McpSite().register(Volume, fields="__all__", lookup_field="title")
    with pytest.raises(ImproperlyConfigured, match="has no field 'nope'"):
        McpSite().register(Volume, fields="__all__", filter_fields=["nope"])
    with pytest.raises(ImproperlyConfigured, match="tools may be 'search' and 'get'"):
        McpSite().register(Volume, fields="__all__", tools=["delete"])
    with pytest.raises(ImproperlyConfigured, match="cache_scope must be"):
        McpSite().register(Volume, fields="__all__", cache_scope="shared")
    with pytest.raises(TypeError, match="unknown option .field."):
        McpSite().register(Volume, field="__all__")


def test_user_models_never_publish_password_hashes_unless_named():
    site_ = McpSite()
    site_.register(User, fields="__all__")
    assert "password" not in site_.get_model_options(User).get_serializer_class()().fields
    named = McpSite()
    named.register(User, fields=["username", "password"])
    assert "password" in named.get_model_options(User).get_serializer_class()().fields


def test_uri_prefix_and_names_are_overridable():
    custom = McpSite()
    custom.register(Writer, fields=["name"], uri_prefix="books://people/", name="person", title="People")
    resource = custom.get_model_options(Writer)
    assert resource.row_uri_template == "books://people/{pk}" and resource.schema_uri == "books://people/$schema"
    assert [t.name for t in custom.resource_templates] == ["person"]
    custom.unregister(Writer)
    assert custom.resource_templates == [] and custom.resources == []
