"""
Every public name of django_mcp, and each of its parameters, has a description (docs/_ext/public_api_check.py).

``scripts/docs`` runs the same check at the start of every build and fails on what it finds;
here it runs under plain pytest (Django set up by pytest-django, no Sphinx), on the real packages
and on a throwaway module that shows each kind of problem is reported under the name users import.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest


EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_ext_{name}", EXT / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


public_api_check = load("public_api_check")

# The packages the check must cover at least; public_packages() adds any other that gains an __all__.
EXPECTED_PACKAGES = {"django_mcp", "django_mcp.model_resources", "django_mcp.template_prompts",
                     "django_mcp.admin_actions", "django_mcp.drf", "django_mcp.test", "django_mcp.prompts",
                     "django_mcp.resources", "django_mcp.tools"}


def test_the_public_packages_are_found():
    assert set(public_api_check.public_packages()) >= EXPECTED_PACKAGES


def test_every_public_name_and_parameter_is_described():
    assert public_api_check.undocumented(public_api_check.public_packages()) == [], (
        "describe each in its docstring, naming a parameter as ``name``")


# The module the next tests check: exec'd into a module of its own name, so its functions and
# classes belong to the package "fake_public_api" as django_mcp's belong to django_mcp.
FAKE_SOURCE = '''
"""A public API with a description missing in each way the check knows."""

import json

__all__ = ["described", "half_described", "Undocumented", "Configured", "BareInit", "Inherited", "Foreign",
           "json", "missing"]


def described(query, limit=10, *args, **kwargs):
    """Search for ``query``, at most ``limit=`` results."""


def half_described(query, limit=10):
    """Search for ``query``."""


class Undocumented:
    def __init__(self, name):
        self.name = name


class Configured:
    """Built from ``name``."""

    def __init__(self, name, timeout=1.0):
        """Waits at most ``timeout`` seconds."""


class BareInit:
    """Says nothing of its parameter."""

    def __init__(self, path):
        self.path = path


class Inherited(Configured):
    """Takes what Configured takes, described there."""


class Foreign(ValueError):
    """A ValueError: its parameters are Python's to describe."""
'''


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> str:
    module = ModuleType("fake_public_api")
    monkeypatch.setitem(sys.modules, "fake_public_api", module)
    exec(compile(textwrap.dedent(FAKE_SOURCE), "fake_public_api.py", "exec"), module.__dict__)
    return "fake_public_api"


def test_each_missing_description_is_reported_by_name(fake_api: str):
    problems = public_api_check.undocumented([fake_api])
    assert "fake_public_api.half_described: parameter 'limit' is not described" in problems
    assert "fake_public_api.Undocumented: has no docstring" in problems
    assert "fake_public_api.BareInit: parameter 'path' is not described" in problems
    assert any(problem.startswith("fake_public_api.missing: is in __all__ but cannot be imported")
               for problem in problems)
    assert len(problems) == 4, problems


def test_what_counts_as_described(fake_api: str):
    problems = "\n".join(public_api_check.undocumented([fake_api]))
    # ``query`` and ``limit=`` name parameters; *args/**kwargs need no description.
    assert "fake_public_api.described:" not in problems
    # The class's docstring and its __init__'s together, also through a subclass of the same package.
    assert "fake_public_api.Configured:" not in problems
    assert "fake_public_api.Inherited:" not in problems
    # An __init__ from outside the package (Exception's) is not checked; a module needs only its docstring.
    assert "fake_public_api.Foreign:" not in problems
    assert "fake_public_api.json:" not in problems


def test_a_docstring_inherited_from_outside_the_package_does_not_count(monkeypatch: pytest.MonkeyPatch):
    module = ModuleType("fake_public_api")
    monkeypatch.setitem(sys.modules, "fake_public_api", module)
    exec("class Error(ValueError):\n    pass\n\n__all__ = ['Error']\n", module.__dict__)
    assert public_api_check.undocumented(["fake_public_api"]) == ["fake_public_api.Error: has no docstring"]


def test_a_module_without_a_docstring_is_reported(monkeypatch: pytest.MonkeyPatch):
    bare, api = ModuleType("fake_public_api.bare"), ModuleType("fake_public_api")
    bare.__doc__ = None
    api.bare, api.__all__ = bare, ["bare"]
    monkeypatch.setitem(sys.modules, "fake_public_api", api)
    assert public_api_check.undocumented(["fake_public_api"]) == ["fake_public_api.bare: the module has no docstring"]
