"""
The JSON Schemas the Server Card and ``server.json`` are checked against: written for these tests
from the drafts' own text (each file's ``$comment`` names its source and commit).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

HERE = Path(__file__).resolve().parent


@cache
def _validator(filename: str) -> Any:
    schema = json.loads((HERE / filename).read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def card_errors(card: Any) -> list[str]:
    """What is wrong with ``card`` by the Server Card draft schema (SEP-2127), as messages."""
    return [error.message for error in _validator("server-card.schema.json").iter_errors(card)]


def server_json_errors(document: Any) -> list[str]:
    """What is wrong with ``document`` by the MCP Registry's ``server.json`` schema, as messages."""
    return [error.message for error in _validator("server.schema.json").iter_errors(document)]
