"""
Reading a JSON Schema the way MCP clients do (for ``django_mcp.lint``): the values of a keyword
(``$ref``, ``$anchor``) outside the schema's data, whether a ``$ref`` resolves inside the schema
itself, and whether the schema is valid at all.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote


# Keywords whose values are data, where a "$ref" key is no reference; and those mapping names to schemas.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def keyword_values(node: Any, keyword: str, in_map: bool = False) -> Iterable[str]:
    """The string values of ``keyword`` (``$ref``…) in a schema; ``in_map``: ``node`` maps names to schemas."""
    if isinstance(node, dict):
        for key, value in node.items():
            if in_map:
                yield from keyword_values(value, keyword)
            elif key == keyword and isinstance(value, str):
                yield value
            elif key not in _DATA_KEYWORDS:
                yield from keyword_values(value, keyword, key in _SCHEMA_MAPS)
    elif isinstance(node, list) and not in_map:
        yield from (value for item in node for value in keyword_values(item, keyword))


def resolves_inline(schema: Any, ref: str) -> bool:
    """Whether ``ref`` points into ``schema`` itself: a JSON pointer, or an ``$anchor``, after ``#``."""
    if not ref.startswith("#"):
        return False  # another document, which a client would have to fetch: none do
    fragment = unquote(ref[1:])
    if not fragment.startswith("/"):
        return not fragment or fragment in set(keyword_values(schema, "$anchor"))
    node = schema
    for part in fragment[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")  # RFC 6901 escapes
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def schema_checker() -> Callable[[Any], str | None] | None:
    """A function naming what makes a schema invalid; None without ``jsonschema``, an optional dependency."""
    try:
        from jsonschema import Draft202012Validator, validators
        from jsonschema.exceptions import SchemaError
    except ImportError:
        return None

    def check(schema: Any) -> str | None:
        # No $schema means 2020-12 (MCP spec 2025-11-25, basic, "JSON Schema Usage").
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # an unknown $schema falls back to 2020-12
            validator = validators.validator_for(schema, default=Draft202012Validator)
        try:
            validator.check_schema(schema)
        except SchemaError as error:
            return f"{error.message} (at {'/'.join(map(str, error.path)) or 'the top'})"
        return None

    return check
