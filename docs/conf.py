"""
Sphinx configuration of the documentation site (``scripts/docs`` builds it).

Sphinx with MyST-Parser, so the Markdown pages under docs/ are the site's pages as they are, and
the Furo theme; docs/contributing.md says why. The references under docs/reference/ are generated
from the code: autodoc for the public API, and the extensions in docs/_ext/ for settings, system
checks, management commands and template tags, so none of them can drift from the source.
"""

import os
import sys
from importlib.metadata import PackageNotFoundError, version as distribution_version
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]

# autodoc imports models, admin classes and settings-reading modules: Django must be set up with
# every feature app installed (docs/_settings.py).
os.environ["DJANGO_SETTINGS_MODULE"] = "docs._settings"
import django  # noqa: E402

django.setup()

# -- Project -------------------------------------------------------------------------------------

project = "django_mcp"
author = "the django_mcp authors"
copyright = "the django_mcp authors"  # noqa: A001 (Sphinx's name)
try:
    release = distribution_version("django-mcpkit")
except PackageNotFoundError:  # a checkout that was never installed
    release = "0.1.0"
version = ".".join(release.split(".")[:2])

# -- General -------------------------------------------------------------------------------------

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    # docs/_ext/: references generated from the source.
    "settings_reference",
    "checks_reference",
    "commands_reference",
    "template_tags_reference",
    "internal_references",
    # Not a reference: fails the build while a public name or parameter has no description.
    "public_api_check",
]
# No sphinx.ext.intersphinx: it downloads other projects' inventories at build time, and the build
# must work offline (CI included). References to Python's, Django's or Pydantic's own classes are
# therefore left unlinked; nitpick_ignore_regex below says which.

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "_ext",
    "_templates",
    "Thumbs.db",
    ".DS_Store",
]
templates_path: list[str] = []

# Every warning is an error under scripts/docs (-W); -n also reports every cross-reference that
# does not resolve. The code's type hints name many classes of other projects, which only
# intersphinx could link: those are allowed to stay unresolved, and so are references to
# django_mcp's internals that exist in the code (docs/_ext/internal_references.py).
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(typing|typing_extensions|collections|collections\.abc|asyncio|enum|abc|types|datetime|"
               r"pathlib|contextvars|dataclasses|decimal|uuid|json|re|io|logging|argparse|functools|"
               r"weakref|inspect|_asyncio)\..*"),
    (r"py:.*", r"(django|rest_framework|channels|daphne|oauth2_provider|oauthlib|pydantic|pydantic_core|"
               r"mcp_types|asgiref|jsonschema|opentelemetry)(\..*)?"),
    # Builtins and the typing shorthands Sphinx prints unqualified in signatures.
    (r"py:(class|obj|data)", r"(Any|Callable|Awaitable|AsyncIterator|Iterator|Iterable|Mapping|Sequence|"
                             r"Literal|Self|ClassVar|TypeVar|T|P|NoneType|None|Ellipsis|\.\.\.)"),
]

# -- MyST ------------------------------------------------------------------------------------------

myst_enable_extensions = ["colon_fence", "deflist"]
# Anchors for headings down to ###, so the pages' [x](file.md#section) links resolve.
myst_heading_anchors = 3

# -- autodoc ---------------------------------------------------------------------------------------

autodoc_member_order = "bysource"
# Members as each page lists them; no "Bases:" lines, which would name internal mixins.
autodoc_default_options = {"members": True}
# Type hints belong in the signature, where they read as the code does; the descriptions stay prose.
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

# -- HTML ------------------------------------------------------------------------------------------

html_theme = "furo"
html_title = f"django_mcp {release}"
html_static_path: list[str] = []
# No sphinx.ext.viewcode: its [source] links point at anchors it leaves out for short methods
# (docs/_ext/check_links.py found them). No "edit this page" links either: the project names no
# public repository yet (pyproject.toml, [project.urls]).
