"""
Tool arguments from DRF serializers and Django forms, results through DRF serializers
(``input_serializer``, ``input_form``, ``output_serializer``; MCP spec 2025-11-25, server/tools).
"""

import datetime
import json
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured

from django_mcp import ToolError
from django_mcp.context import Context
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.versions import Era
from django_mcp.sites import McpSite
from django_mcp.tools.base import Tool
from tests.catalogue.api import LendForm, OrderSerializer, OwnedTagSerializer, VolumeCardSerializer, VolumeSerializer
from tests.catalogue.models import Tag, Volume, Writer


# Validation runs on a worker thread, which must see the rows the tests make: real transactions.
pytestmark = pytest.mark.django_db(transaction=True)


def ctx(user: Any = None) -> RequestContext:
    return RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=user)


def check(schema: dict[str, Any], instance: Any) -> None:
    """The schema is valid JSON Schema (2020-12, the MCP default) and accepts ``instance``."""
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(instance)


def refuses(schema: dict[str, Any], instance: Any) -> bool:
    return not jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).is_valid(instance)


ORDER = {
    "customer": "Ada", "email": "ada@example.com", "budget": "12.50", "deliver_on": "2025-03-01",
    "format": "hb", "address": {"street": "1 Main St", "city": "Turin"},
}


def order_tool(seen: dict[str, Any]) -> Tool:
    def place_order(**data: Any) -> str:
        """Place an order."""
        seen.update(data)
        return "ordered"

    return Tool.from_function(place_order, input_serializer=OrderSerializer)


# Schemas from serializers --------------------------------------------------------------------------------


def test_serializer_schema_types():
    schema = order_tool({}).definition()["inputSchema"]
    props = schema["properties"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["customer", "email", "budget", "deliver_on", "format", "address"]
    assert props["customer"] == {"type": "string", "maxLength": 50, "minLength": 1, "title": "Customer name"}
    assert props["email"]["format"] == "email"
    assert props["website"] == {"anyOf": [{"type": "string", "format": "uri", "minLength": 1}, {"type": "null"}]}
    assert props["reference"] == {"type": "string", "format": "uuid"}
    assert props["copies"] == {"type": "integer", "minimum": 1, "maximum": 20, "default": 1}
    assert props["discount"] == {"type": "number", "minimum": 0, "maximum": 0.5}
    # Decimals are strings (lossless), with at most decimal_places digits after the point.
    assert props["budget"] == {"type": "string", "format": "decimal", "pattern": r"^-?\d+(\.\d{1,2})?$",
                               "description": "The most to spend."}
    assert props["gift"] == {"type": "boolean", "default": False}
    assert props["deliver_on"] == {"type": "string", "format": "date"}
    assert props["deliver_after"] == {"type": "string", "format": "time"}
    assert props["ordered_at"] == {"type": "string", "format": "date-time"}
    assert props["format"] == {"type": "string", "enum": ["hb", "pb"],
                               "description": "Choices: hb (Hardback); pb (Paperback)."}
    assert props["colours"] == {"type": "array", "items": {"type": "string", "enum": ["red", "green", "blue"]},
                                "uniqueItems": True}
    assert props["notes"] == {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 3}
    assert props["extra"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["payload"] == {}


def test_serializer_schema_nested_and_many():
    props = order_tool({}).input_schema["properties"]
    address = props["address"]
    assert address["type"] == "object" and address["required"] == ["street", "city"]
    assert address["properties"]["city"] == {"type": "string", "maxLength": 40, "minLength": 1,
                                             "description": "The city or town."}
    # RegexField: Python's \Z becomes $ so JSON Schema (ECMA-262) clients read the pattern too.
    assert address["properties"]["postcode"]["pattern"] == r"^\d{5}$"
    assert props["others"] == {"type": "array", "items": address}


def test_serializer_schema_accepts_valid_arguments_and_refuses_bad_ones():
    schema = order_tool({}).input_schema
    check(schema, {**ORDER, "others": [{"street": "2 Side St", "city": "Rome", "postcode": "00100"}],
                   "colours": ["red"], "website": None, "extra": {"a": 1}})
    assert refuses(schema, {**ORDER, "format": "ebook"})
    assert refuses(schema, {**ORDER, "budget": 12.5})  # a number, not the lossless string
    assert refuses(schema, {**ORDER, "budget": "12.505"})
    assert refuses(schema, {**ORDER, "address": {"street": "x"}})
    assert refuses(schema, {**ORDER, "unknown": 1})


def test_model_serializer_schema():
    def add(**data: Any) -> str:
        return ""

    schema = Tool.from_function(add, input_serializer=VolumeSerializer).input_schema
    props = schema["properties"]
    assert "id" not in props and "added" not in props  # read-only fields are no arguments
    assert props["writer"] == {"type": "integer"}  # PrimaryKeyRelatedField: the key's type
    assert props["tags"] == {"type": "array", "items": {"type": "integer"}}
    assert props["title"]["description"] == "The title on the cover."
    assert props["published"] == {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}
    assert schema["required"] == ["title", "writer"]


# Schemas from forms ------------------------------------------------------------------------------------


def lend_tool(seen: dict[str, Any]) -> Tool:
    def lend(volume, reader, days, until, deposit, tags, wrapping, express):
        seen.update(volume=volume, reader=reader, days=days, until=until, deposit=deposit, tags=list(tags),
                    wrapping=wrapping, express=express)
        return f"{volume} lent to {reader} for {days} days"

    return Tool.from_function(lend, input_form=LendForm)


def test_form_schema():
    schema = lend_tool({}).input_schema
    props = schema["properties"]
    assert schema["additionalProperties"] is False
    # days has an initial value, filled in when absent: not required of the client.
    assert schema["required"] == ["volume", "reader"]
    assert props["volume"] == {"type": "integer", "description": "The volume to lend."}
    assert props["reader"] == {"type": "string", "maxLength": 30, "title": "Reader's name"}
    assert props["days"] == {"type": "integer", "minimum": 1, "maximum": 60, "default": 14}
    assert props["until"] == {"type": "string", "format": "date"}
    assert props["deposit"]["pattern"] == r"^-?\d+(\.\d{1,2})?$"
    assert props["tags"] == {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    assert props["wrapping"]["items"] == {"type": "string", "enum": ["paper", "ribbon"]}
    assert props["express"] == {"type": "boolean"}
    check(schema, {"volume": 1, "reader": "Bo", "until": "2025-01-31", "wrapping": ["paper"]})


def test_form_required_checkbox_must_be_ticked():
    class Terms(forms.Form):
        accept = forms.BooleanField(help_text="Accept the terms.")

    def sign(accept: bool) -> str:
        return "signed"

    schema = Tool.from_function(sign, input_form=Terms).input_schema
    assert schema["properties"]["accept"] == {"type": "boolean", "const": True, "description": "Accept the terms."}
    assert refuses(schema, {"accept": False})


# Validation --------------------------------------------------------------------------------------------


async def test_serializer_validation_errors_are_is_error_field_by_field():
    seen: dict[str, Any] = {}
    arguments = {**ORDER, "email": "not-an-address", "copies": 99, "budget": "1.234", "stray": True,
                 "address": {"city": "Turin", "floor": 3}, "others": [{"street": "a", "city": "b"}, {"city": "c"}]}
    result = await order_tool(seen).run(arguments, ctx())
    assert result["isError"] is True and "structuredContent" not in result
    text = result["content"][0]["text"]
    assert text.startswith("Invalid arguments for tool place_order: ")
    for fragment in ("stray: not an argument of this tool", "address.floor: not an argument of this tool",
                     "email: Enter a valid email address.", "copies: Ensure this value is less than or equal to 20.",
                     "budget: Ensure that there are no more than 2 decimal places.",
                     "address.street: This field is required.", "others[1].street: This field is required."):
        assert fragment in text
    assert "others[0]" not in text
    assert seen == {}


async def test_serializer_validated_data_as_keyword_arguments():
    seen: dict[str, Any] = {}
    result = await order_tool(seen).run({**ORDER, "colours": ["red", "blue"], "notes": ["ring twice"]}, ctx())
    assert result == {"content": [{"type": "text", "text": "ordered"}], "isError": False}
    assert seen["budget"] == Decimal("12.50")
    assert seen["deliver_on"] == datetime.date(2025, 3, 1)
    assert seen["copies"] == 1 and seen["gift"] is False  # defaults applied by DRF
    assert set(seen["colours"]) == {"red", "blue"}
    assert dict(seen["address"]) == {"street": "1 Main St", "city": "Turin"}
    assert "discount" not in seen  # optional and absent: absent, as in validated_data


async def test_form_validation_and_cleaned_data():
    writer = await Writer.objects.acreate(name="Le Guin", slug="le-guin")
    volume = await Volume.objects.acreate(title="Earthsea", writer=writer)
    tag = await Tag.objects.acreate(name="sf")
    seen: dict[str, Any] = {}
    tool = lend_tool(seen)
    result = await tool.run({"volume": volume.pk, "reader": "Bo", "tags": [tag.pk], "deposit": "5.50"}, ctx())
    assert result["content"][0]["text"] == "Earthsea lent to Bo for 14 days"
    assert seen["volume"] == volume and seen["tags"] == [tag]  # ModelChoiceField looked the row up (on a thread)
    assert seen["days"] == 14 and seen["deposit"] == Decimal("5.50") and seen["express"] is False
    assert seen["until"] is None and seen["wrapping"] == []

    seen.clear()
    result = await tool.run({"volume": volume.pk + 100, "reader": "x" * 31, "until": "soon"}, ctx())
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "volume: Select a valid choice." in text
    assert "reader: Ensure this value has at most 30 characters (it has 31)." in text
    assert "until: Enter a valid date." in text
    # The form's clean(): an error of the whole form, without a field name.
    result = await tool.run({"volume": volume.pk, "reader": "Bo", "express": True}, ctx())
    assert result["content"][0]["text"] == "Invalid arguments for tool lend: Express loans last at most 7 days."
    assert seen == {}


async def test_serializer_instance_parameter_and_database_save():
    writer = await Writer.objects.acreate(name="Calvino", slug="calvino")

    def add_volume(title: str, writer: Writer, serializer: VolumeSerializer, tags: list | None = None,
                   pages: int = 100, price: Decimal = Decimal("1"), published: datetime.date | None = None,
                   format: str = "pb", in_print: bool = True) -> str:
        volume = serializer.save()  # a sync work method runs on a thread, so it may use the ORM
        return f"{volume.pk}:{volume.title}:{volume.writer.name}"

    tool = Tool.from_function(add_volume, input_serializer=VolumeSerializer)
    result = await tool.run({"title": "Invisible Cities", "writer": writer.pk, "pages": 165}, ctx())
    assert result["isError"] is False, result
    pk = int(result["content"][0]["text"].split(":")[0])
    assert (await Volume.objects.aget(pk=pk)).pages == 165
    refused = await tool.run({"title": "X", "writer": writer.pk + 50}, ctx())
    assert refused["isError"] is True
    assert f'writer: Invalid pk "{writer.pk + 50}" - object does not exist.' in refused["content"][0]["text"]


async def test_serializer_context_has_the_caller():
    user = await User.objects.acreate(username="ada")

    def tag(name: str, owner: Any, ctx: Context) -> str:
        return f"{name} by {owner.username} ({ctx.user.username})"

    result = await Tool.from_function(tag, input_serializer=OwnedTagSerializer).run({"name": "sf"}, ctx(user))
    assert result["content"][0]["text"] == "sf by ada (ada)"
    # The hidden field is set by the server, never by the client.
    refused = await Tool.from_function(tag, input_serializer=OwnedTagSerializer).run(
        {"name": "sf", "owner": 1}, ctx(user))
    assert "owner: not an argument of this tool" in refused["content"][0]["text"]


async def test_form_kwargs_hook_on_a_class():
    class ShelfForm(forms.Form):
        shelf = forms.CharField()

        def __init__(self, *args, owner=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.owner = owner

        def clean_shelf(self):
            if self.owner is not None and self.cleaned_data["shelf"] == "private":
                raise forms.ValidationError(f"The private shelf is {self.owner}'s only.")
            return self.cleaned_data["shelf"]

    class Shelve(Tool):
        input_form = ShelfForm

        def get_form_kwargs(self, ctx):
            return {"owner": "nobody" if ctx is None else getattr(ctx.user, "username", "anonymous")}

        def call(self, shelf: str, form: ShelfForm) -> str:
            return f"{shelf} for {form.owner}"

    tool = Shelve()
    assert tool.name == "shelve" and tool.input_schema["required"] == ["shelf"]
    assert (await tool.run({"shelf": "top"}, ctx()))["content"][0]["text"] == "top for anonymous"
    refused = await tool.run({"shelf": "private"}, ctx())
    assert refused["content"][0]["text"] == ("Invalid arguments for tool shelve: shelf: The private shelf is "
                                              "anonymous's only.")


# Registration ------------------------------------------------------------------------------------------


def test_options_through_the_site_short_forms():
    site = McpSite()

    @site.tool(input_serializer=OrderSerializer, output_serializer=VolumeCardSerializer)
    def order(**data: Any) -> Any:
        return None

    def lend(**data: Any) -> str:
        return ""

    site.add_tool(lend, input_form=LendForm)
    assert site.get_tool("order").input_schema["required"][0] == "customer"
    assert site.get_tool("order").output_schema["properties"]["summary"] == {}
    assert "volume" in site.get_tool("lend").input_schema["properties"]
    with pytest.raises(TypeError, match="unknown option 'input_serialiser'"):
        site.tool(input_serialiser=OrderSerializer)
    with pytest.raises(TypeError, match="unknown option"):
        site.add_tool(lend, output_form=LendForm)


def test_work_methods_that_validation_could_not_call_are_refused():
    def missing_field(customer: str) -> str:
        return customer

    def no_default(customer, email, budget, deliver_on, format, address, website, **rest) -> str:
        return ""

    def not_a_field(volume, reader, days, until, deposit, tags, wrapping, express, colour) -> str:
        return ""

    with pytest.raises(ImproperlyConfigured, match="does not take 'address', 'budget'"):
        Tool.from_function(missing_field, input_serializer=OrderSerializer)
    with pytest.raises(ImproperlyConfigured, match="'website' is optional"):
        Tool.from_function(no_default, input_serializer=OrderSerializer)
    with pytest.raises(ImproperlyConfigured, match="'colour' of its work method is no field of LendForm"):
        Tool.from_function(not_a_field, input_form=LendForm)
    with pytest.raises(ImproperlyConfigured, match="not both"):
        Tool.from_function(missing_field, input_serializer=OrderSerializer, input_form=LendForm)
    with pytest.raises(ImproperlyConfigured, match="DRF serializer class"):
        Tool.from_function(missing_field, input_serializer=OrderSerializer())
    with pytest.raises(ImproperlyConfigured, match="Django form class"):
        Tool.from_function(missing_field, input_form=dict)


# Output serializers ------------------------------------------------------------------------------------


@pytest.fixture
def volumes():
    writer = Writer.objects.create(name="Ursula K. Le Guin", slug="le-guin")
    sf = Tag.objects.create(name="sf")
    earthsea = Volume.objects.create(title="A Wizard of Earthsea", writer=writer, pages=183,
                                     price=Decimal("8.50"), published=datetime.date(1968, 11, 1))
    earthsea.tags.add(sf)
    Volume.objects.create(title="The Tombs of Atuan", writer=writer, pages=163)
    return writer


def test_output_schema_from_the_serializer():
    class Card(Tool):
        output_serializer = VolumeCardSerializer

        def call(self, pk: int) -> Volume:
            return Volume.objects.get(pk=pk)

    schema = Card().definition()["outputSchema"]
    props = schema["properties"]
    assert props["id"] == {"type": "integer", "title": "ID"}
    assert props["writer"]["properties"]["slug"]["type"] == "string"
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["price"] == {"type": "string", "format": "decimal"}  # as DRF writes decimals
    assert props["published"] == {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}
    assert props["summary"] == {}
    assert "additionalProperties" not in schema


async def test_output_serializer_writes_structured_content(volumes):
    class Card(Tool):
        output_serializer = VolumeCardSerializer

        def call(self, title: str) -> Volume:
            return Volume.objects.select_related("writer").get(title=title)

    tool = Card()
    result = await tool.run({"title": "A Wizard of Earthsea"}, ctx())
    assert result["isError"] is False
    structured = result["structuredContent"]
    assert structured["writer"] == {"id": volumes.pk, "name": "Ursula K. Le Guin", "slug": "le-guin"}
    assert structured["tags"] == ["sf"] and structured["price"] == "8.50"
    assert structured["published"] == "1968-11-01"
    assert structured["summary"] == "A Wizard of Earthsea (183 pages)"
    assert json.loads(result["content"][0]["text"]) == structured
    check(tool.output_schema, structured)


async def test_output_serializer_with_many(volumes):
    def titles(writer: str):
        return Volume.objects.filter(writer__slug=writer).order_by("title")

    tool = Tool.from_function(titles, output_serializer=VolumeCardSerializer(many=True))
    assert tool.output_schema["required"] == ["results"]
    result = await tool.run({"writer": "le-guin"}, ctx())
    assert [row["title"] for row in result["structuredContent"]["results"]] == ["A Wizard of Earthsea",
                                                                                "The Tombs of Atuan"]
    check(tool.output_schema, result["structuredContent"])


async def test_error_results_never_carry_structured_content(volumes):
    def missing(title: str) -> Any:
        return Volume.objects.get(title=title)

    def refused(title: str) -> Any:
        raise ToolError(f"No volume called {title}")

    def nothing() -> Any:
        return None

    def broken() -> Any:
        return object()  # the serializer cannot write it

    for fn, arguments, text in (
        (missing, {"title": "Nope"}, "Volume matching query does not exist."),
        (refused, {"title": "Nope"}, "No volume called Nope"),
        (nothing, {}, "Tool nothing returned no result."),
        (broken, {}, "Tool broken failed with an internal error."),
    ):
        tool = Tool.from_function(fn, output_serializer=VolumeCardSerializer)
        assert tool.output_schema is not None
        result = await tool.run(arguments, ctx())
        assert result == {"content": [{"type": "text", "text": text}], "isError": True}


async def test_input_and_output_together(volumes):
    class Retitle(Tool):
        """Give a volume a new title."""

        input_serializer = VolumeSerializer
        output_serializer = VolumeCardSerializer
        annotations = {"idempotentHint": True}

        def call(self, serializer: VolumeSerializer, **data: Any) -> Volume:
            volume = Volume.objects.get(title=data["title"])
            updated = VolumeSerializer(volume, data={"title": data["title"].upper()}, partial=True)
            updated.is_valid(raise_exception=True)
            return updated.save()

    tool = Retitle()
    assert tool.description == "Give a volume a new title."
    result = await tool.run({"title": "The Tombs of Atuan", "writer": volumes.pk}, ctx())
    assert result["structuredContent"]["title"] == "THE TOMBS OF ATUAN"
    invalid = await tool.run({"title": ""}, ctx())
    assert invalid["isError"] is True and "structuredContent" not in invalid
    assert "title: This field may not be blank." in invalid["content"][0]["text"]
    assert "writer: This field is required." in invalid["content"][0]["text"]
