"""
What the fresh venv has installed, as JSON: where django_mcp is imported from, the distribution's
metadata and files, and which of the templates named on the command line Django's loaders find.
"""

import importlib.metadata
import json
import sys

import _setup  # noqa: F401  (Django set up with the project's settings)
import django
from django.template import TemplateDoesNotExist
from django.template.loader import get_template

import django_mcp


def loads(name: str) -> bool:
    try:
        get_template(name)
    except TemplateDoesNotExist:
        return False
    return True


dist = importlib.metadata.distribution("django-mcpkit")
meta = dist.metadata
print(json.dumps({
    "module": django_mcp.__file__,
    "prefix": sys.prefix,
    "python": "%d.%d" % sys.version_info[:2],
    "django": django.get_version(),
    "version": dist.version,
    "metadata_version": meta["Metadata-Version"],
    "summary": meta["Summary"],
    "license_expression": meta["License-Expression"],
    "license_files": meta.get_all("License-File") or [],
    "classifiers": meta.get_all("Classifier") or [],
    "requires_python": meta["Requires-Python"],
    "files": [str(path) for path in dist.files or []],
    "templates": {name: loads(name) for name in sys.argv[1:]},
}))
