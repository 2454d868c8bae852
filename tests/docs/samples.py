"""
The code samples of the documentation, read from the Markdown and turned into a project.

Independent of pytest, so a page can be tried from a shell::

    from tests.docs.samples import fences, tutorial_pages
    for page in tutorial_pages():
        for fence in fences(page):
            print(fence.where, fence.lang, fence.target)

The conventions the pages follow, so the tests can run them:

- A fenced block's language is the first word of its info string (```` ```python ````, ```` ```console ````).
- A Python block whose first line is a comment naming a file (``# library/models.py``) is that
  whole file. ``# mysite/settings.py (excerpt)`` is part of a file: each top-level statement
  replaces the one of the same name in the file (an assignment, a function, a class), an import
  is added after the file's imports unless it is there, anything else is added at the end; ``...``
  in a list stands for the items the file's list already has. A Django template block names its
  file in a ``{# path #}`` comment on its first line.
- A ``console`` block holds commands after ``$ `` and, below each, what it prints.
- ``<!-- no-test -->`` on the line before a fence marks a fragment that is not even compiled.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


__all__ = ["DOCS", "README", "ROOT", "Command", "Fence", "commands", "fences", "json_subset", "merge_excerpt",
           "toctree", "tutorial_pages"]

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"

NO_TEST = "<!-- no-test -->"
_FENCE = re.compile(r"^(?P<indent> *)(?P<marks>`{3,}|~{3,})(?P<info>.*)$")
_PY_TARGET = re.compile(r"^#\s+(?P<path>[\w./-]*\w\.(?:py|txt|md|html|json))(?P<excerpt>\s+\(excerpt\))?(?:\s.*)?$")
_TEMPLATE_TARGET = re.compile(r"^\{#\s+(?P<path>[\w./-]+)\s+#\}$")


@dataclass(frozen=True)
class Fence:
    """One fenced block of a Markdown file."""

    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    no_test: bool

    @property
    def where(self) -> str:
        """``docs/tutorial/tools.md:42``, for failure messages."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def target(self) -> tuple[str, bool] | None:
        """``(path, is_excerpt)`` when the block's first line names the file it belongs to."""
        first = self.text.split("\n", 1)[0].strip()
        if self.lang == "python" and (found := _PY_TARGET.match(first)):
            return found["path"], bool(found["excerpt"])
        if self.lang == "django" and (found := _TEMPLATE_TARGET.match(first)):
            return found["path"], False
        return None


def _closes(line: str, marks: str) -> bool:
    """Whether ``line`` closes a fence opened with ``marks``: the same character, at least as many."""
    stripped = line.strip()
    return len(stripped) >= len(marks) and set(stripped) == {marks[0]}


def fences(page: Path) -> list[Fence]:
    """Every fenced block of ``page``, in order (a fence indented in a list item included)."""
    lines = page.read_text().splitlines()
    found: list[Fence] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, marks = len(opening["indent"]), opening["marks"]
        body: list[str] = []
        end = index + 1
        while end < len(lines) and not _closes(lines[end], marks):
            body.append(lines[end][indent:] if lines[end][:indent].strip() == "" else lines[end])
            end += 1
        info = opening["info"].strip()
        previous = lines[index - 1].strip() if index else ""
        found.append(Fence(page, index + 1, info.split()[0] if info else "", "\n".join(body) + "\n",
                           previous == NO_TEST))
        index = end + 1
    return found


_RST_BLOCK = re.compile(r"^(?P<indent>[ ]*)\.\. code-block:: (?P<lang>\S+)\s*$")


def rst_code_blocks(page: Path) -> list[Fence]:
    """Every ``.. code-block::`` of a reStructuredText page (options skipped), as fences."""
    lines = page.read_text().splitlines()
    found: list[Fence] = []
    for index, line in enumerate(lines):
        opening = _RST_BLOCK.match(line)
        if opening is None:
            continue
        outer = len(opening["indent"])
        body: list[str] = []
        inner: int | None = None
        for following in lines[index + 1:]:
            if not following.strip():
                body.append("")
                continue
            indent = len(following) - len(following.lstrip())
            if indent <= outer:
                break
            if inner is None:
                if following.lstrip().startswith(":"):  # an option of the directive
                    continue
                inner = indent
            body.append(following[inner:] if indent >= inner else following.lstrip())
        found.append(Fence(page, index + 1, opening["lang"], "\n".join(body).strip("\n") + "\n", False))
    return found


def toctree(index: Path) -> list[str]:
    """The entries of the first ``{toctree}`` directive of a MyST page, options left out."""
    for fence in fences(index):
        if fence.lang == "{toctree}":
            return [line.strip() for line in fence.text.splitlines() if line.strip() and not line.startswith(":")]
    raise ValueError(f"{index} has no toctree")


def tutorial_pages() -> list[Path]:
    """The tutorial's parts in the order its index lists them."""
    index = DOCS / "tutorial" / "index.md"
    return [index.parent / f"{name}.md" for name in toctree(index)]


@dataclass(frozen=True)
class Command:
    """One ``$ command`` of a console block and the output shown below it."""

    fence: Fence
    text: str
    output: str


def commands(fence: Fence) -> list[Command]:
    """The commands of a ``console`` block, each with the lines printed below it."""
    found: list[Command] = []
    for line in fence.text.splitlines():
        if line.startswith("$ "):
            found.append(Command(fence, line[2:].strip(), ""))
        elif found:
            found[-1] = Command(fence, found[-1].text, found[-1].output + line + "\n")
    return found


# --- excerpts -----------------------------------------------------------------------------------


def _name(node: ast.stmt) -> str | None:
    """The name a top-level statement defines, when it defines exactly one."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(decorator.lineno for decorator in decorators)])


def _expand_ellipsis(new: ast.stmt, old: ast.stmt, new_source: str) -> str:
    """``X = ["a", ..., "b"]`` over ``X = [...]`` in the file: the file's items take the place of ``...``."""
    value, previous = getattr(new, "value", None), getattr(old, "value", None)
    if not (isinstance(value, ast.List) and isinstance(previous, ast.List)):
        return new_source
    marks = [item for item in value.elts if isinstance(item, ast.Constant) and item.value is Ellipsis]
    if not marks:
        return new_source
    named = [ast.literal_eval(item) for item in value.elts if item not in marks]
    existing = [item for item in ast.literal_eval(previous) if item not in named]
    items: list[Any] = []
    for item in value.elts:
        items.extend(existing if item in marks else [ast.literal_eval(item)])
    return f"{_name(new)} = {json.dumps(items, indent=4)}"


def merge_excerpt(original: str, excerpt: str) -> str:
    """Apply an ``(excerpt)`` block to a file's source, as a reader edits the file (see the module docstring)."""
    excerpt_lines = excerpt.splitlines()
    body = ast.parse(excerpt).body
    start = 0
    for node in body:
        chunk = "\n".join(excerpt_lines[start:node.end_lineno])  # with the comments above the statement
        statement = "\n".join(excerpt_lines[_first_line(node) - 1:node.end_lineno])
        start = node.end_lineno
        lines = original.splitlines()
        tree = ast.parse(original).body
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if statement in lines:
                continue
            imports = [other for other in tree if isinstance(other, (ast.Import, ast.ImportFrom))]
            at = imports[-1].end_lineno if imports else 0
            lines[at:at] = [statement]
        elif (name := _name(node)) and (same := [other for other in tree if _name(other) == name]):
            old = same[-1]
            replacement = _expand_ellipsis(node, old, statement)
            lines[_first_line(old) - 1:old.end_lineno] = replacement.splitlines()
        elif statement not in original:
            lines.extend(["", chunk.strip("\n")])
        original = "\n".join(lines) + "\n"
    return original


# --- outputs ------------------------------------------------------------------------------------


def json_subset(shown: Any, actual: Any, path: str = "$") -> list[str]:
    """
    Where ``actual`` differs from what a page shows: every key shown must be there with the value
    shown (keys the page leaves out are not compared), lists item by item and of the same length.
    """
    if isinstance(shown, dict):
        if not isinstance(actual, dict):
            return [f"{path}: shown an object, got {actual!r}"]
        return [problem for key, value in shown.items()
                for problem in (json_subset(value, actual[key], f"{path}.{key}") if key in actual
                                else [f"{path}: no key {key!r} in {sorted(actual)}"])]
    if isinstance(shown, list):
        if not isinstance(actual, list) or len(actual) != len(shown):
            return [f"{path}: shown {len(shown)} items, got {actual!r}"]
        return [problem for index, (one, other) in enumerate(zip(shown, actual, strict=True))
                for problem in json_subset(one, other, f"{path}[{index}]")]
    return [] if shown == actual else [f"{path}: shown {shown!r}, got {actual!r}"]
