"""
A check of the build, not a directive: every public name of django_mcp has a description, and so
has each of its parameters. The API reference (docs/reference/) renders the docstrings as they are,
so a name or a parameter the docstring leaves out is one the site never explains; each is a
warning, and ``scripts/docs`` (``-W``) fails until it is written.

The public names are those in ``__all__`` of ``django_mcp`` and of every package under it whose
``__init__.py`` assigns a non-empty ``__all__`` (``public_packages``). For each, ``undocumented``
requires:

- a module: a docstring;
- a function (or any other routine): a docstring, and every parameter of its signature described
  in it, except ``self``, ``cls`` and ``*args``/``**kwargs``-style ones;
- a class: a docstring of its own or of a base class of the same package (not only one inherited
  from Django, pydantic or ``object``), and every parameter of its ``__init__`` described in the
  class's docstring, the docstring of the class that defines that ``__init__``, or the
  ``__init__``'s own; an ``__init__`` inherited from outside the package is not checked;
- any other object (an instance such as ``django_mcp.site``): its class's docstring, found as for a class.

The convention for "described" is the one the docstrings already follow: the parameter's name is
written as an inline literal, in double backticks, alone or with its keyword's equals sign
(``name``, ``name=`` or ``name=value``), anywhere in those docstrings. Nothing else counts (no
``:param:`` fields, no "Args:" sections), so the check is a plain text search whose answer never
depends on layout. Class attributes are not checked: options classes describe theirs with ``#:``
comments.

``undocumented`` imports the packages but neither Sphinx nor anything Sphinx-specific, so the tests
(tests/docs/test_public_api_check.py) call it directly; it needs Django set up, as docs/conf.py
does before the extensions load.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PACKAGE = "django_mcp"
ROOT = Path(__file__).resolve().parents[2]

# Parameters the caller never passes by name, so no docstring is expected to name them.
IMPLICIT = {"self", "cls"}
VARIADIC = {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}


def public_packages(root: Path = ROOT) -> list[str]:
    """
    ``django_mcp`` and every package under it whose ``__init__.py`` assigns a non-empty ``__all__``,
    found by reading the source (importing every package would load apps the settings may not
    install).
    """
    found = []
    for init in sorted((root / PACKAGE).rglob("__init__.py")):
        if "__pycache__" in init.parts or not _assigns_all(init.read_text(encoding="utf-8")):
            continue
        found.append(".".join(init.parent.relative_to(root).parts))
    return sorted(found)


def _assigns_all(source: str) -> bool:
    for statement in ast.parse(source).body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) and statement.value else [])
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            value = statement.value
            # An empty list or tuple exports nothing; anything else (a literal or not) exports names.
            return not (isinstance(value, (ast.List, ast.Tuple)) and not value.elts)
    return False


def undocumented(module_names: Iterable[str]) -> list[str]:
    """
    One message per missing description among the ``__all__`` names of the modules
    ``module_names``, each naming the import path users write (``django_mcp.prompt: parameter
    'site' is not described``); empty when everything is described.
    """
    problems = []
    for module_name in module_names:
        module = importlib.import_module(module_name)
        # "Inside" is the top-level package: a docstring inherited from a django_mcp base counts,
        # one inherited from Django's or pydantic's does not.
        package = module_name.partition(".")[0]
        for name in module.__all__:
            path = f"{module_name}.{name}"
            try:
                # getattr, not the module's __dict__: django_mcp's names load through __getattr__.
                obj = getattr(module, name)
            except (AttributeError, ImportError) as error:
                problems.append(f"{path}: is in __all__ but cannot be imported ({error})")
                continue
            problems.extend(_problems(path, obj, package))
    return problems


def _problems(path: str, obj: Any, package: str) -> list[str]:
    if inspect.ismodule(obj):
        return [] if _text(obj.__doc__) else [f"{path}: the module has no docstring"]
    if inspect.isclass(obj):
        return _class_problems(path, obj, package)
    if inspect.isroutine(obj):
        doc = _text(obj.__doc__)
        if not doc:
            return [f"{path}: has no docstring"]
        return _parameter_problems(path, _parameters(obj), doc)
    # An instance: its class says what it is.
    if _class_doc(type(obj), package) is None:
        return [f"{path}: has no docstring (nor has its class {type(obj).__qualname__})"]
    return []


def _class_problems(path: str, cls: type, package: str) -> list[str]:
    doc = _class_doc(cls, package)
    if doc is None:
        return [f"{path}: has no docstring"]
    owner = next((klass for klass in cls.__mro__ if "__init__" in vars(klass)), object)
    if not _inside(owner, package):
        # Django's Model, pydantic's BaseModel, Exception, object: their parameters are theirs to document.
        return []
    init = vars(owner)["__init__"]
    docs = "\n".join(filter(None, [doc, _text(vars(owner).get("__doc__")), _text(init.__doc__)]))
    return _parameter_problems(path, _parameters(init), docs)


def _class_doc(cls: type, package: str) -> str | None:
    """The first docstring along the MRO, if it is written in ``package``; else None."""
    for klass in cls.__mro__:
        doc = _text(vars(klass).get("__doc__"))
        if doc and not _generated(klass, doc):
            return doc if _inside(klass, package) else None
    return None


def _generated(cls: type, doc: str) -> bool:
    # @dataclass writes "Name(field: type, ...)" as the docstring of a class that has none.
    return dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}(")


def _inside(cls: type, package: str) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module == package or module.startswith(package + ".")


def _parameters(function: Any) -> list[str]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return []
    return [parameter.name for parameter in signature.parameters.values()
            if parameter.name not in IMPLICIT and parameter.kind not in VARIADIC]


def _parameter_problems(path: str, names: list[str], doc: str) -> list[str]:
    return [f"{path}: parameter {name!r} is not described" for name in names if not _describes(doc, name)]


def _describes(doc: str, name: str) -> bool:
    # ``name``, ``name=`` or ``name=value``: the literal the docstrings write for a parameter.
    return re.search(rf"``{re.escape(name)}(=[^`]*)?``", doc) is not None


def _text(doc: Any) -> str:
    return doc.strip() if isinstance(doc, str) else ""


def setup(app: Any) -> dict[str, Any]:
    # Imported here, not above: the tests load this module without the docs extra (Sphinx).
    from sphinx.util import logging

    logger = logging.getLogger(__name__)

    def check(app: Any) -> None:
        # builder-inited: once per build, before any page is read, after conf.py set Django up.
        for problem in undocumented(public_packages()):
            logger.warning("%s (the public API must be described: docs/_ext/public_api_check.py says how)", problem,
                           type="public-api")

    app.connect("builder-inited", check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
