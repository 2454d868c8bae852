"""
Read the settings' defaults and descriptions from the source of ``django_mcp/conf.py``.

The description of a setting is the comment written for it there: the comment lines directly
above its key in ``DEFAULTS``, and a comment at the end of its line (``# None: the installed
django_mcp version``). A key with no comment above it that directly follows another key shares
that key's description: conf.py describes small groups with one comment (``# Identity reported in
serverInfo.`` above ``SERVER_NAME``, ``SERVER_TITLE``…). A key with neither is undocumented, and
the settings reference warns about it (an error under ``scripts/docs``).

This module imports neither Django nor Sphinx: tests/docs/test_settings_reference.py runs it
under plain pytest, and docs/_ext/settings_reference.py renders what it returns.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path


@dataclass(frozen=True)
class SettingSource:
    """One key of ``DEFAULTS`` as written in conf.py."""

    name: str
    #: The default as written (``4 * 1024 * 1024``), on one line.
    default_source: str
    #: The comment describing it; empty when there is none.
    description: str
    #: The key whose comment also describes this one (a group), or None when it has its own.
    shared_with: str | None
    lineno: int


def conf_path() -> Path:
    """Where ``django_mcp/conf.py`` is, found without importing it (it imports Django)."""
    spec = find_spec("django_mcp.conf")
    if spec is None or spec.origin is None:
        raise ImportError("django_mcp.conf cannot be found")
    return Path(spec.origin)


def _comments_by_line(source: str) -> dict[int, str]:
    """Line number → the text of the comment on it, without ``#`` and surrounding space."""
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    return comments


def _dict_assigned(tree: ast.Module, name: str) -> ast.Dict:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            if isinstance(node.value, ast.Dict):
                return node.value
    raise ValueError(f"conf.py has no dict literal assigned to {name}")


def _one_line(source: str, node: ast.expr) -> str:
    segment = ast.get_source_segment(source, node) or ast.unparse(node)
    # A list written over several lines reads as it would on one.
    return ast.unparse(node) if "\n" in segment else segment


def read_settings(source: str | None = None) -> list[SettingSource]:
    """Every key of ``DEFAULTS``, in the order conf.py lists them, with its description."""
    if source is None:
        source = conf_path().read_text(encoding="utf-8")
    tree = ast.parse(source)
    defaults = _dict_assigned(tree, "DEFAULTS")
    comments = _comments_by_line(source)
    lines = source.splitlines()

    def comment_only(lineno: int) -> bool:
        return lineno in comments and lines[lineno - 1].lstrip().startswith("#")

    found: list[SettingSource] = []
    # The comment above each key, which a group's later keys share (not a key's own line comment).
    group_text: dict[str, str] = {}
    previous_end = defaults.lineno
    for key, value in zip(defaults.keys, defaults.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise ValueError(f"conf.py line {getattr(key, 'lineno', '?')}: DEFAULTS keys must be string literals")
        above: list[str] = []
        line = key.lineno - 1
        while line > previous_end and comment_only(line):
            above.insert(0, comments[line])
            line -= 1
        trailing = [comments[n] for n in range(key.lineno, value.end_lineno + 1)
                    if n in comments and not comment_only(n)]
        shared_with = None
        group_text[key.value] = " ".join(above)
        if not above and found and previous_end == key.lineno - 1 and group_text[found[-1].name]:
            shared_with = found[-1].shared_with or found[-1].name
            group_text[key.value] = group_text[found[-1].name]
        description = " ".join(part for part in [group_text[key.value], *trailing] if part)
        found.append(SettingSource(key.value, _one_line(source, value), description, shared_with, key.lineno))
        previous_end = value.end_lineno
    return found


def read_feature_settings(source: str | None = None) -> dict[str, str]:
    """``FEATURE_SETTINGS``: setting → the feature app that reads it."""
    if source is None:
        source = conf_path().read_text(encoding="utf-8")
    return ast.literal_eval(_dict_assigned(ast.parse(source), "FEATURE_SETTINGS"))


def undocumented(settings: list[SettingSource]) -> list[str]:
    """The settings conf.py gives no description."""
    return [setting.name for setting in settings if not setting.description]
