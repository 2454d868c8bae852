"""
Find django_mcp's system checks in its source: every ``Debug``/``Info``/``Warning``/``Error``/
``Critical`` built with an ``id=`` (``checks.Warning(..., id="django_mcp.W005")``), with its
message, hint, the tags it is registered under and whether it runs only with ``--deploy``.

Imports neither Django nor Sphinx (tests/docs/ can run it under plain pytest); reading the
source rather than running the checks finds every message, including those a configuration
never triggers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

LEVELS = ("Debug", "Info", "Warning", "Error", "Critical")


@dataclass(frozen=True)
class CheckSource:
    """One system check message as written in the source."""

    id: str
    level: str
    #: The message, with ``{…}`` standing for what an f-string fills in.
    message: str
    hint: str
    #: ``Tags`` the enclosing check function is registered under (``security``, ``database``…).
    tags: tuple[str, ...]
    deploy: bool
    #: Dotted module path, and the line of the call.
    module: str
    lineno: int


def package_path() -> Path:
    spec = find_spec("django_mcp")
    if spec is None or spec.origin is None:
        raise ImportError("django_mcp cannot be found")
    return Path(spec.origin).parent


def _string_constants(path: Path, seen: frozenset[Path] = frozenset()) -> dict[str, ast.expr]:
    """Module-level names bound to a string in ``path``, or imported from a sibling module that binds one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module and path not in seen:
            source = path.parent / (node.module.replace(".", "/") + ".py")
            if source.is_file():
                imported = _string_constants(source, seen | {path})
                constants.update({alias.asname or alias.name: imported[alias.name]
                                  for alias in node.names if alias.name in imported})
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = node.value
    return constants


def _text(node: ast.expr | None, constants: dict[str, ast.expr] | None = None) -> str:
    """A message argument as readable text: literals joined, f-string fields as ``{name}``."""
    constants = constants or {}
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return _text(constants[node.id])
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                inner = value.value if isinstance(value, ast.FormattedValue) else value
                simple = isinstance(inner, (ast.Name, ast.Attribute, ast.Subscript))
                parts.append("{" + (ast.unparse(inner) if simple else "…") + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, constants) + _text(node.right, constants)
    return "{" + ast.unparse(node) + "}"


def _registration(function: ast.AST) -> tuple[tuple[str, ...], bool]:
    """The tags of ``@register(Tags.x, …, deploy=…)`` on a check function."""
    for decorator in getattr(function, "decorator_list", []):
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).split(".")[-1] == "register":
            tags = tuple(ast.unparse(arg).split(".")[-1] for arg in decorator.args)
            deploy = any(k.arg == "deploy" and isinstance(k.value, ast.Constant) and k.value.value
                         for k in decorator.keywords)
            return tags, deploy
    return (), False


def _level(call: ast.Call) -> str | None:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    return name if name in LEVELS else None


def read_checks(root: Path | None = None) -> list[CheckSource]:
    """Every system check message in the package, sorted by id."""
    root = root or package_path()
    found: list[CheckSource] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _string_constants(path)
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            tags, deploy = _registration(function)
            for call in ast.walk(function):
                if not isinstance(call, ast.Call) or _level(call) is None:
                    continue
                keywords = {k.arg: k.value for k in call.keywords}
                ident = keywords.get("id")
                if not (isinstance(ident, ast.Constant) and isinstance(ident.value, str)):
                    continue
                message = call.args[0] if call.args else keywords.get("msg")
                found.append(CheckSource(ident.value, _level(call), _text(message, constants),
                                         _text(keywords.get("hint"), constants),
                                         tags, deploy, module, call.lineno))
    return sorted(found, key=lambda check: (check.id, check.lineno))
