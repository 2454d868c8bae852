"""
The slot models plug into: ``site.register(Model, OptionsClass)``. A small options class here
publishes ``auth.Group`` rows — a resource template per row and the rows themselves as a
keyset-paged resource listing — which is the shape ``ModelResource`` fills in.
"""

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ImproperlyConfigured

from django_mcp import ModelOptions, ResourceTemplate
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import ResourceNotFound
from django_mcp.protocol.versions import Era
from django_mcp.resources.base import Resource
from django_mcp.decorators import register
from django_mcp.sites import AlreadyRegistered, McpSite, NotRegistered
from django_mcp.sources import PrimitiveSource


pytestmark = pytest.mark.django_db(transaction=True)


class RowResource(Resource):
    """One row as a concrete resource in ``resources/list``."""

    def __init__(self, uri: str, name: str) -> None:
        self.uri, self.name = uri, name
        super().__init__()

    def read(self) -> str:
        return self.name


class RowSource(PrimitiveSource):
    """The rows of a model, by primary key: a page is one query, whatever the table's size."""

    kind = "resource"

    def __init__(self, options: "RowOptions") -> None:
        self.options = options
        self.queries = 0

    async def candidates(self, ctx: Any, position: Any, limit: int) -> tuple[list[tuple[Any, Any]], bool]:
        rows = self.options.model._default_manager.order_by("pk")
        if position is not None:
            rows = rows.filter(pk__gt=position)
        self.queries += 1
        found = await database_sync_to_async(lambda: list(rows[:limit + 1]))()
        return [(self.options.row_resource(row), row.pk) for row in found[:limit]], len(found) > limit

    async def lookup(self, key: str, ctx: Any) -> Any:
        return None  # rows are read through the template


class RowOptions(ModelOptions):
    """Publishes a model's rows under ``<scheme>://<pk>``."""

    options = frozenset({"scheme"})
    scheme: str | None = None

    def get_scheme(self) -> str:
        return self.scheme or f"{self.opts.app_label}.{self.opts.model_name}"

    def row_resource(self, row: Any) -> Resource:
        return RowResource(f"{self.get_scheme()}://{row.pk}", str(row))

    def get_primitives(self) -> list[Any]:
        model = self.model

        class Row(ResourceTemplate):
            uri_template = f"{self.get_scheme()}://{{pk}}"
            name = self.opts.model_name

            def read(self, pk: str) -> str:
                return str(model._default_manager.get(pk=pk))  # DoesNotExist → not found

        return [Row]

    def get_sources(self) -> list[PrimitiveSource]:
        self.source = RowSource(self)
        return [self.source]


def ctx() -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25")


async def all_resources(site: McpSite) -> list[str]:
    uris, cursor = [], None
    while True:
        page = await site.list_resources(cursor, ctx())
        uris.extend(item["uri"] for item in page.items)
        if (cursor := page.next_cursor) is None:
            return uris


async def test_a_registered_model_is_listed_read_and_withdrawn():
    groups = await database_sync_to_async(
        lambda: [Group.objects.create(name=f"group {n}") for n in range(25)])()
    site = McpSite()
    site.page_size = 10
    site.register(Group, RowOptions)
    assert site.is_registered(Group) and isinstance(site.get_model_options(Group), RowOptions)
    assert site.capabilities(ctx())["resources"] == {"subscribe": True, "listChanged": True}
    assert await all_resources(site) == [f"auth.group://{group.pk}" for group in groups]
    # Three pages for 25 rows, one query each: the table is never loaded whole.
    assert site.get_model_options(Group).source.queries == 3
    assert (await site.read_resource(f"auth.group://{groups[3].pk}", ctx()))[0]["text"] == "group 3"
    with pytest.raises(ResourceNotFound):
        await site.read_resource("auth.group://999999", ctx())

    site.unregister(Group)
    assert not site.is_registered(Group)
    assert site.resource_templates == [] and await all_resources(site) == []
    assert "resources" not in site.capabilities(ctx())
    with pytest.raises(NotRegistered):
        site.get_model_options(Group)


def test_options_as_keywords_build_a_subclass():
    site = McpSite()
    site.register(Group, RowOptions, scheme="teams")
    options = site.get_model_options(Group)
    assert type(options) is not RowOptions and isinstance(options, RowOptions)
    assert [t.uri_template for t in site.resource_templates] == ["teams://{pk}"]
    with pytest.raises(TypeError, match="unknown option 'schema'.*known options: scheme"):
        McpSite().register(Group, RowOptions, schema="x")


def test_registering_a_model_twice_or_without_options_is_refused():
    site = McpSite()
    site.register([Group, Permission], RowOptions)
    with pytest.raises(AlreadyRegistered, match="Group is already registered with RowOptions"):
        site.register(Group, RowOptions)
    with pytest.raises(ImproperlyConfigured, match=r"resource of auth.Group needs `fields`"):
        McpSite().register(Group)
    with pytest.raises(TypeError, match="not a ModelOptions subclass"):
        McpSite().register(Group, dict)  # type: ignore[arg-type]


def test_a_failing_contribution_leaves_nothing_behind():
    site = McpSite()
    site.register(Group, RowOptions, scheme="clash")

    class Clashing(RowOptions):
        scheme = "clash"

    with pytest.raises(AlreadyRegistered):
        site.register(Permission, Clashing)
    assert not site.is_registered(Permission)
    assert [t.uri_template for t in site.resource_templates] == ["clash://{pk}"]


def test_the_register_decorator_takes_models_or_primitive_classes():
    site = McpSite()

    @register(Group, site=site)
    class GroupOptions(RowOptions):
        pass

    @register(site=site)
    class Motd(Resource):
        uri = "motd://today"

        def read(self) -> str:
            return "hello"

    assert site.is_registered(Group) and site.is_registered(Motd)
    with pytest.raises(ValueError, match="ModelOptions"):
        register(Permission, site=site)(Motd)
    with pytest.raises(ValueError, match="Tool, Resource"):
        register(site=site)(GroupOptions)
