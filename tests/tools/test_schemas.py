"""Input and output schemas derived from type hints (MCP spec 2026-07-28, server/tools)."""

from typing import Annotated, Any, Optional

import mcp_types
import pytest
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from django_mcp.context import Context
from django_mcp.tools.base import Tool
from django_mcp.tools.schemas import OutputSpec, arguments_model, output_spec, schema_for_arguments


class Point(BaseModel):
    x: int
    y: int = 0


class Movie(TypedDict):
    title: str
    year: int


def test_input_schema_types_required_and_defaults():
    def search(query: str, limit: int = 10, exact: bool = False, ratio: float | None = None) -> str:
        return ""

    schema = Tool.from_function(search).input_schema
    assert schema["type"] == "object"
    assert "title" not in schema
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert props["query"]["type"] == "string"
    assert props["limit"] == {"default": 10, "title": "Limit", "type": "integer"}
    assert props["exact"]["type"] == "boolean" and props["exact"]["default"] is False
    assert props["ratio"]["default"] is None
    assert {"type": "number"} in props["ratio"]["anyOf"]
    # Unknown keys are refused by the arguments model, and the schema says so.
    assert schema["additionalProperties"] is False


def test_annotated_field_descriptions_and_constraints():
    def rate(stars: Annotated[int, Field(description="From 1 to 5", ge=1, le=5)],
             comment: Annotated[str, Field(description="Free text", max_length=20)] = "") -> str:
        return ""

    props = Tool.from_function(rate).input_schema["properties"]
    assert props["stars"]["description"] == "From 1 to 5"
    assert props["stars"]["minimum"] == 1 and props["stars"]["maximum"] == 5
    assert props["comment"]["description"] == "Free text"
    assert props["comment"]["maxLength"] == 20
    assert props["comment"]["default"] == ""


def test_x_mcp_header_from_json_schema_extra():
    def forecast(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], days: int = 1) -> str:
        return ""

    props = Tool.from_function(forecast).input_schema["properties"]
    assert props["region"]["x-mcp-header"] == "Region"
    assert props["region"]["type"] == "string"
    assert "x-mcp-header" not in props["days"]


def test_no_argument_tool_schema():
    def now() -> str:
        return ""

    assert Tool.from_function(now).input_schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_context_parameter_is_not_an_argument():
    async def with_ctx(ctx: Context, name: str) -> str:
        return ""

    async def only_ctx(ctx: Context) -> str:
        return ""

    assert list(Tool.from_function(with_ctx).input_schema["properties"]) == ["name"]
    assert Tool.from_function(only_ctx).input_schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_var_args_are_skipped():
    def loose(a: int, *rest: int, **extra: Any) -> str:
        return ""

    assert list(Tool.from_function(loose).input_schema["properties"]) == ["a"]


def test_nested_model_argument_uses_defs():
    def move(to: Point) -> str:
        return ""

    schema = Tool.from_function(move).input_schema
    assert schema["properties"]["to"] == {"$ref": "#/$defs/Point"}
    assert schema["$defs"]["Point"]["required"] == ["x"]


def test_unannotated_parameter_accepts_anything():
    def anything(value) -> str:  # noqa: ANN001
        return ""

    model = arguments_model(anything, set())
    assert model.model_validate({"value": [1, "x"]}).value == [1, "x"]
    assert schema_for_arguments(model)["required"] == ["value"]


def test_arguments_model_forbids_unknown_keys():
    def f(a: int) -> int:
        return a

    model = arguments_model(f, set())
    with pytest.raises(ValidationError):
        model.model_validate({"a": 1, "b": 2})
    assert model.model_validate({"a": "3"}).a == 3


# Output schemas -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "annotation",
    [str, None, Any, mcp_types.TextContent, list[mcp_types.ImageContent], mcp_types.TextContent | str],
)
def test_unstructured_return_types_have_no_output_schema(annotation):
    def f():
        return None

    f.__annotations__["return"] = annotation
    assert output_spec(f) is None


def test_no_return_annotation_has_no_output_schema():
    def f():
        return 1

    assert output_spec(f) is None
    assert "outputSchema" not in Tool.from_function(f).definition()


def test_object_return_is_used_as_is():
    def where() -> Point:
        return Point(x=1)

    tool = Tool.from_function(where)
    assert tool.output_schema["type"] == "object"
    assert set(tool.output_schema["properties"]) == {"x", "y"}
    assert "title" not in tool.output_schema
    assert tool.output.wrapped is False
    assert tool.output.structured(Point(x=1)) == {"x": 1, "y": 0}


def test_typed_dict_and_dict_returns_are_objects():
    assert OutputSpec(Movie).wrapped is False
    assert OutputSpec(Movie).structured({"title": "Alien", "year": "1979"}) == {"title": "Alien", "year": 1979}
    spec = OutputSpec(dict[str, int])
    assert spec.wrapped is False
    assert spec.schema == {"type": "object", "additionalProperties": {"type": "integer"}}


@pytest.mark.parametrize(
    ("annotation", "value", "inner", "structured"),
    [
        (int, 3, {"type": "integer"}, {"result": 3}),
        (list[int], [1, 2], {"type": "array", "items": {"type": "integer"}}, {"result": [1, 2]}),
        (bool, True, {"type": "boolean"}, {"result": True}),
        (Optional[int], None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}, {"result": None}),
    ],
)
def test_non_object_returns_are_wrapped_in_result(annotation, value, inner, structured):
    spec = OutputSpec(annotation)
    assert spec.wrapped is True
    assert spec.schema == {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    assert spec.structured(value) == structured


def test_wrapped_list_of_models_keeps_defs_at_the_root():
    spec = OutputSpec(list[Point])
    assert spec.schema["properties"]["result"] == {"type": "array", "items": {"$ref": "#/$defs/Point"}}
    assert "Point" in spec.schema["$defs"]
    assert spec.structured([Point(x=2)]) == {"result": [{"x": 2, "y": 0}]}


def test_structured_value_is_validated():
    with pytest.raises(ValidationError):
        OutputSpec(int).structured("not a number")
    with pytest.raises(ValidationError):
        OutputSpec(Point).structured({"y": 1})


def test_structured_output_false_and_explicit_output_schema():
    def f() -> int:
        return 1

    assert Tool.from_function(f, structured_output=False).output_schema is None
    custom = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert Tool.from_function(f, output_schema=custom).definition()["outputSchema"] == custom


def test_invalid_x_mcp_header_placement_is_refused_at_registration():
    from django.core.exceptions import ImproperlyConfigured

    def ratio(value: Annotated[float, Field(json_schema_extra={"x-mcp-header": "Ratio"})]) -> str:
        return ""

    def twice(a: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
              b: Annotated[str, Field(json_schema_extra={"x-mcp-header": "region"})]) -> str:
        return ""

    for fn in (ratio, twice):
        with pytest.raises((ImproperlyConfigured, TypeError, ValueError)):
            Tool.from_function(fn)
