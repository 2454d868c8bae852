"""The header block of prompt templates (django_mcp/prompts/header.py)."""

import pytest

from django_mcp.template_prompts.header import HeaderError, parse_header


HEADER = """{% load mcp_prompts %}
{% comment "mcp" %}
# A comment line.
title: Review a book
description: A critical review,
  with the record embedded.
argument book: The book to review
  (its id).
  type: int
argument tone: How it should sound.
  choices: friendly, critical
  default: friendly
argument note:
  required: no
{% endcomment %}
Text {{ book }}
"""


def test_parses_title_description_and_arguments():
    assert parse_header(HEADER) == {
        "title": "Review a book",
        "description": "A critical review, with the record embedded.",
        "arguments": [
            {"name": "book", "description": "The book to review (its id).", "type": "int"},
            {"name": "tone", "description": "How it should sound.", "choices": ["friendly", "critical"],
             "default": "friendly"},
            {"name": "note", "required": False},
        ],
    }


def test_no_header_is_empty():
    assert parse_header("Just text {{ x }}") == {}
    assert parse_header('{% comment "other" %}title: x{% endcomment %}') == {}


@pytest.mark.parametrize(("body", "message"), [
    ("tilte: x", "line 2: expected 'title:'"),
    ("argument a: x\n  required: maybe", "required must be yes or no"),
    ("argument a: x\nargument a: y", "declared twice"),
    ("argument a: x\n  choices: ,", "choices needs"),
    ("  indented first", "indented line"),
])
def test_mistakes_name_the_line(body, message):
    with pytest.raises(HeaderError, match=message):
        parse_header('{% comment "mcp" %}\n' + body + "\n{% endcomment %}")
