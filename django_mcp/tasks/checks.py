"""
System checks of the tasks app (``manage.py check``): a tool's ``task_support`` must be one of the
values the protocol knows (MCP spec 2025-11-25, basic/utilities/tasks, ``ToolExecution.taskSupport``),
and durable tasks need a task framework.
"""

from __future__ import annotations

from typing import Any

from django.core import checks

from ..conf import mcp_settings
from ..sites import all_sites
from . import compat
from .hooks import SUPPORT_VALUES


@checks.register()
def check_task_support(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Every tool's ``task_support`` is ``"forbidden"``, ``"optional"`` or ``"required"``."""
    found = []
    for site in all_sites():
        for tool in site.tools:
            value = getattr(tool, "task_support", None)
            if value is not None and value not in SUPPORT_VALUES:
                found.append(checks.Error(
                    f"The tool {tool.name!r} of site {site.name!r} has task_support={value!r}",
                    hint='Use "forbidden" (the default), "optional" or "required".', id="django_mcp.E003"))
    return found


@checks.register()
def check_task_backend(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``TASK_BACKEND`` names a backend of ``TASKS`` (or is None)."""
    alias = mcp_settings.TASK_BACKEND
    if not alias:
        return []
    if not compat.AVAILABLE:
        return [checks.Warning(
            "django_mcp.tasks runs tasks in the web worker: Django's task framework is not installed",
            hint='pip install "django-mcpkit[tasks]" (on Django 5.2 it brings the django-tasks backport).',
            id="django_mcp.W009")]
    try:
        compat.backend(alias)
    except Exception:
        return [checks.Error(f'DJANGO_MCP["TASK_BACKEND"] is {alias!r}, which TASKS does not define',
                             hint="Name an alias of the TASKS setting, or None to run tasks in the web worker.",
                             id="django_mcp.E004")]
    return []
