"""django_mcp.contract_changes: each difference between two snapshots, and whether it breaks clients."""

import copy

import pytest

from django_mcp.contract_changes import compare


BOOK = {"$defs": {"Book": {"type": "object", "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                           "required": ["title", "year"]}},
        "type": "object", "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Book"}}},
        "required": ["result"]}
SEARCH = {"name": "search", "description": "Search.",
          "inputSchema": {"type": "object", "properties": {"query": {"type": "string", "maxLength": 100},
                                                           "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                                                           "format": {"type": "string", "enum": ["pdf", "epub"]}},
                          "required": ["query"]},
          "outputSchema": BOOK, "annotations": {"readOnlyHint": True}, "requiredScopes": ["mcp:tools"]}
SUMMARIZE = {"name": "summarize", "arguments": [{"name": "topic", "required": True}, {"name": "style"}]}
ITEM = {"uriTemplate": "library://item/{id}", "name": "item", "mimeType": "application/json"}


def contracts(**changes):
    site = {"tools": {"search": copy.deepcopy(SEARCH)}, "prompts": {"summarize": copy.deepcopy(SUMMARIZE)},
            "resourceTemplates": {ITEM["uriTemplate"]: dict(ITEM)}, "resources": {}}
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = site
        for part in parents:
            target = target[part]
        if value is None:
            del target[last]
        else:
            target[last] = value
    return {"format": 1, "sites": {"default": site}}


def changed(**changes):
    return [(str(change).split(": ", 1)[1] if ": " in str(change) else str(change), change.breaking)
            for change in compare(contracts(), contracts(**changes))]


def test_nothing_changed():
    assert compare(contracts(), contracts()) == []


REMOVED = "removed (clients that call it by name will fail; renamed counts as removed)"


@pytest.mark.parametrize(("changes", "expected"), [
    ({"tools__search": None}, [(REMOVED, True)]),
    ({"tools__lookup": dict(SEARCH, name="lookup")}, [("added", False)]),
    ({"prompts__summarize": None}, [(REMOVED, True)]),
])
def test_primitives_removed_break_and_added_do_not(changes, expected):
    assert changed(**changes) == expected


def schema(**properties_and_required):
    changed_schema = copy.deepcopy(SEARCH["inputSchema"])
    changed_schema["required"] = properties_and_required.pop("required", changed_schema["required"])
    for name, value in properties_and_required.items():
        if value is None:
            del changed_schema["properties"][name]
        else:
            changed_schema["properties"][name] = value
    return changed_schema


@pytest.mark.parametrize(("input_schema", "expected"), [
    (schema(author={"type": "string"}, required=["query", "author"]), [("argument author added, required", True)]),
    (schema(author={"type": "string"}), [("argument author added", False)]),
    (schema(limit=None), [("argument limit removed", True)]),
    (schema(required=["query", "limit"]), [("argument limit became required", True)]),
    (schema(required=[]), [("argument query became optional", False)]),
    (schema(limit={"type": "string"}), [("argument limit: type integer became string", True),
                                        ("argument limit: minimum 1 removed", False),
                                        ("argument limit: maximum 50 removed", False)]),
    (schema(limit={"type": "number", "minimum": 1, "maximum": 50}), [("argument limit: accepts number now", False)]),
    (schema(limit={"type": "integer", "minimum": 1, "maximum": 20}), [("argument limit: maximum 50 became 20", True)]),
    (schema(limit={"type": "integer", "minimum": 0, "maximum": 50}), [("argument limit: minimum 1 became 0", False)]),
    (schema(limit={"type": "integer", "minimum": 1}), [("argument limit: maximum 50 removed", False)]),
    (schema(query={"type": "string", "maxLength": 10}), [("argument query: maxLength 100 became 10", True)]),
    (schema(query={"type": "string", "maxLength": 100, "pattern": "^[a-z]+$"}),
     [("argument query: pattern changed", True)]),
    (schema(format={"type": "string", "enum": ["pdf"]}), [("argument format: fewer values allowed (enum)", True)]),
    (schema(format={"type": "string", "enum": ["pdf", "epub", "mobi"]}),
     [("argument format: more values allowed (enum)", False)]),
])
def test_arguments_that_accept_fewer_values_break_and_more_do_not(input_schema, expected):
    assert changed(tools__search__inputSchema=input_schema) == expected


def output(**book_changes):
    changed_schema = copy.deepcopy(BOOK)
    book = changed_schema["$defs"]["Book"]
    for key, value in book_changes.items():
        book[key] = value
    return changed_schema


@pytest.mark.parametrize(("output_schema", "expected"), [
    (output(properties={"title": {"type": "string"}}, required=["title"]),
     [("output field result[].year removed", True)]),
    (output(required=["title"]), [("output field result[].year is no longer always present", True)]),
    (output(properties={"title": {"type": "string"}, "year": {"type": "string"}}),
     [("output field result[].year: type integer became string", True)]),
    (output(properties={"title": {"type": "string"}, "year": {"type": "integer"}, "isbn": {"type": "string"}}),
     [("output field result[].isbn added", False)]),
    (None, [("no longer publishes an output schema (structured content may stop)", True)]),
])
def test_output_fields_clients_read_that_go_or_change_break_them(output_schema, expected):
    assert changed(tools__search__outputSchema=output_schema) == expected


def test_a_new_output_schema_is_compatible():
    old = contracts(tools__search__outputSchema=None)
    assert [(change.message, change.breaking) for change in compare(old, contracts())] == [
        ("publishes an output schema now", False)]


@pytest.mark.parametrize(("changes", "expected"), [
    ({"tools__search__annotations": {}}, [("no longer read-only (readOnlyHint)", True)]),
    ({"tools__search__annotations": {"readOnlyHint": True, "openWorldHint": False}}, [("annotations changed", False)]),
    ({"tools__search__requiredScopes": ["mcp:tools", "library:admin"]},
     [("now needs the scope(s) library:admin", True)]),
    ({"tools__search__requiredScopes": None}, [("needs fewer scopes", False)]),
    ({"tools__search__execution": {"taskSupport": "required"}}, [("task support 'forbidden' became 'required'", True)]),
    ({"tools__search__execution": {"taskSupport": "optional"}},
     [("task support 'forbidden' became 'optional'", False)]),
    ({"tools__search__description": "Find books."}, [("description changed", False)]),
    ({"tools__search__title": "Search"}, [("title changed", False)]),
])
def test_annotations_scopes_task_support_and_descriptions(changes, expected):
    assert changed(**changes) == expected


@pytest.mark.parametrize(("arguments", "expected"), [
    ([{"name": "topic", "required": True}, {"name": "style"}, {"name": "tone", "required": True}],
     [("argument tone added, required", True)]),
    ([{"name": "topic", "required": True}, {"name": "style"}, {"name": "tone"}], [("argument tone added", False)]),
    ([{"name": "topic", "required": True}], [("argument style removed", True)]),
    ([{"name": "topic", "required": True}, {"name": "style", "required": True}],
     [("argument style became required", True)]),
    ([{"name": "topic"}, {"name": "style"}], [("argument topic became optional", False)]),
])
def test_prompt_arguments(arguments, expected):
    assert changed(prompts__summarize__arguments=arguments) == expected


def test_a_resource_templates_mime_type_change_breaks_its_readers():
    template = dict(ITEM, mimeType="text/plain")
    assert changed(resourceTemplates=({ITEM["uriTemplate"]: template})) == [
        ("MIME type 'application/json' became 'text/plain'", True)]


def test_breaking_changes_come_first_and_name_their_site():
    old = {"format": 1, "sites": {"default": contracts()["sites"]["default"], "admin": {"tools": {"a": {}}}}}
    new = {"format": 1, "sites": {"default": contracts(tools__lookup={})["sites"]["default"], "admin": {"tools": {}}}}
    assert [str(change) for change in compare(old, new)] == [
        "BREAKING   [admin] tool a: removed (clients that call it by name will fail; renamed counts as removed)",
        "compatible tool lookup: added"]
