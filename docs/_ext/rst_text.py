"""Turning the source's plain comments and help texts into reStructuredText for the references."""

from __future__ import annotations

import re

_SINGLE_BACKTICKS = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
# Characters reStructuredText would read as markup at the start of inline text.
_MARKUP = re.compile(r"([*|_\\])")


def inline(text: str) -> str:
    """
    A comment or help text as reStructuredText: Markdown-style ```x``` becomes literal
    ````x````, ``*`` and ``|`` are escaped outside literals, the rest reads as written.
    """
    text = _SINGLE_BACKTICKS.sub(r"``\1``", text)
    parts = re.split(r"(``.+?``)", text)
    return "".join(part if part.startswith("``") else _MARKUP.sub(r"\\\1", part) for part in parts)


def literal(text: str) -> str:
    """``text`` as an inline literal, whatever backticks it holds."""
    if "``" in text or text.endswith("`") or text.startswith("`"):
        return ":literal:`" + text.replace("\\", "\\\\").replace("`", "\\`") + "`"
    return f"``{text}``"


def indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())
