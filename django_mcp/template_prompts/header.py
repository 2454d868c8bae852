"""
The header block of a prompt template: its title, description and arguments, written at the
top of the template in a comment, so the template renders as if the header were not there::

    {% comment "mcp" %}
    title: Review a book
    description: A critical review of one book, with its catalogue record embedded.
    argument book: The book to review (its id).
      type: int
    argument tone: How the review should sound.
      choices: friendly, critical, academic
      default: friendly
    {% endcomment %}

Top-level lines are ``title:``, ``description:`` and ``argument NAME: description``; the indented
lines under an argument are its options (:data:`ARGUMENT_OPTIONS`); any other indented line
continues the value above it. Blank lines and lines starting with ``#`` are ignored. Mistakes are
:class:`HeaderError` naming the line, so a broken header fails loudly instead of publishing a
prompt with the wrong arguments.
"""

from __future__ import annotations

import re
from typing import Any


#: Options of an argument, as a header writes them (see :mod:`django_mcp.template_prompts.arguments`).
ARGUMENT_OPTIONS = ("type", "required", "default", "choices", "complete", "title", "description")

_BLOCK = re.compile(r"\{%\s*comment\s+([\"'])mcp\1\s*%\}(?P<body>.*?)\{%\s*endcomment\s*%\}", re.DOTALL)
_TOP = re.compile(r"^(?P<key>title|description|argument\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*))\s*:\s*(?P<value>.*)$")
_OPTION = re.compile(rf"^(?P<key>{'|'.join(ARGUMENT_OPTIONS)})\s*:\s*(?P<value>.*)$")
_TRUE = {"yes", "true", "1", "on"}
_FALSE = {"no", "false", "0", "off"}


class HeaderError(ValueError):
    """The header block is malformed; the message names the line."""


def find_header(source: str) -> tuple[str, int] | None:
    """The body of the first ``{% comment "mcp" %}`` block and the line it starts on, or None."""
    found = _BLOCK.search(source)
    if found is None:
        return None
    return found.group("body"), source.count("\n", 0, found.start("body")) + 1


def parse_header(source: str) -> dict[str, Any]:
    """
    ``{"title", "description", "arguments"}`` from a template's source (each key present only
    when the header sets it). ``arguments`` is a list of argument specs: dicts with ``name`` and
    the options given, ``required`` as a bool and ``choices`` as a list of strings.
    """
    found = find_header(source)
    if found is None:
        return {}
    body, first_line = found
    result: dict[str, Any] = {}
    arguments: list[dict[str, Any]] = []
    # Where a continuation line goes: (dict, key) of the value written last.
    last: tuple[dict[str, Any], str] | None = None
    for number, raw in enumerate(body.splitlines(), start=first_line):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        indented = raw[:1].isspace()
        if not indented:
            top = _TOP.match(line)
            if top is None:
                raise HeaderError(f"line {number}: expected 'title:', 'description:' or 'argument NAME:', "
                                  f"got {line!r}")
            if top.group("name"):
                name = top.group("name")
                if any(argument["name"] == name for argument in arguments):
                    raise HeaderError(f"line {number}: argument {name!r} is declared twice")
                argument = {"name": name}
                if top.group("value"):
                    argument["description"] = top.group("value")
                arguments.append(argument)
                last = (argument, "description")
            else:
                result[top.group("key")] = top.group("value")
                last = (result, top.group("key"))
            continue
        option = _OPTION.match(line) if arguments and last is not None and last[0] is arguments[-1] else None
        if option is not None:
            arguments[-1][option.group("key")] = _option_value(option.group("key"), option.group("value"), number)
            last = (arguments[-1], option.group("key"))
        elif last is not None and isinstance(last[0].get(last[1], ""), str):
            # A long description or title wraps onto indented lines.
            target, key = last
            target[key] = f"{target.get(key, '')} {line}".strip()
        else:
            raise HeaderError(f"line {number}: an indented line must follow 'argument NAME:' or continue a value, "
                              f"got {line!r}")
    if arguments:
        result["arguments"] = arguments
    return result


def _option_value(key: str, value: str, number: int) -> Any:
    value = value.strip()
    if key == "required":
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise HeaderError(f"line {number}: required must be yes or no, not {value!r}")
    if key == "choices":
        choices = [choice.strip() for choice in value.split(",") if choice.strip()]
        if not choices:
            raise HeaderError(f"line {number}: choices needs a comma-separated list")
        return choices
    return value
