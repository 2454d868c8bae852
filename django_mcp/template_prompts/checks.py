"""
System checks for prompts (``manage.py check``): prompt files a project has but cannot serve.

Prompt files are found through the project's ``DjangoTemplates`` engine
(:mod:`~django_mcp.template_prompts.engines`). Without one, ``prompts/list`` still answers, with the prompts
defined in code and in the database, and no file is served: ``django_mcp.W007`` names the folders
whose files are left out, and ``django_mcp.I001`` (nothing is left out yet) says how to turn file
prompts on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks

from .files import PROMPTS_FOLDER
from .engines import ENGINE_HINT, project_prompt_engine


def prompt_folders() -> list[Path]:
    """Every ``mcp/prompts/`` folder with a file in it, in apps' ``templates/`` and in any engine's ``DIRS``."""
    roots = [Path(config.path) / "templates" for config in apps.get_app_configs()]
    roots += [Path(directory) for engine in getattr(settings, "TEMPLATES", []) for directory in engine.get("DIRS", [])]
    folders = []
    for root in roots:
        folder = root / PROMPTS_FOLDER
        if folder.is_dir() and any(path.is_file() for path in folder.rglob("*")) and folder not in folders:
            folders.append(folder)
    return folders


@checks.register(checks.Tags.templates)
def check_prompt_engine(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Prompt files need the project's DjangoTemplates engine (docs/prompts.md, "Without Django templates")."""
    if project_prompt_engine() is not None:
        return []
    folders = prompt_folders()
    if folders:
        return [checks.Warning(
            "TEMPLATES has no DjangoTemplates engine, so the prompt templates in "
            f"{', '.join(str(folder) for folder in folders)} are not served: prompts/list leaves them out.",
            hint=ENGINE_HINT, id="django_mcp.W007")]
    return [checks.Info(
        "TEMPLATES has no DjangoTemplates engine: prompts from template files under mcp/prompts/ are off "
        "(prompts in code and in the database still work).",
        hint=ENGINE_HINT, id="django_mcp.I001")]
