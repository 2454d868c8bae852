"""
Which Django template engine renders a prompt.

Prompt files (templates under ``mcp/prompts/``, and ``TemplatePrompt.template_name``) are the
project's templates: they are found through the project's ``DjangoTemplates`` engine, its
directories, loaders and libraries, exactly as a view's template would be. A project without one
(an API-only project, or one that renders with Jinja2) serves no prompt files; the system check
``django_mcp.W007`` (files that are not served) or ``django_mcp.I001`` (file prompts off) says so.

Prompts whose template is a string (staff's prompts stored in the database, ``template_string=``)
need no loader. They render with the project's engine when it has one, so its libraries and
built-ins are there too, and otherwise with an engine of django_mcp's own that loads no file:
Django's built-in tags and filters plus every installed app's tag libraries (``{% load i18n %}``,
``{% load mcp_prompts %}``), and ``DEBUG`` as the project has it.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template import Engine, engines
from django.template.backends.django import DjangoTemplates, get_installed_libraries


#: What a project adds to ``TEMPLATES`` to serve prompt files (shown by the system check and errors).
ENGINE_HINT = ('Add {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True} to '
               "TEMPLATES (beside a Jinja2 engine if you have one); templates under mcp/prompts/ in an app's "
               "templates/ folder, or in the engine's DIRS, then become prompts.")

_lock = threading.Lock()
_own_engine: Engine | None = None


def project_prompt_engine(name: str | None = None) -> Engine | None:
    """
    The project's engine that loads prompt files: the ``TEMPLATES`` entry aliased ``name``, else
    the first ``DjangoTemplates`` one; None when the project has none. ``name`` naming a missing
    alias, or one that is not ``DjangoTemplates``, is ``ImproperlyConfigured``.
    """
    if name is not None:
        try:
            backend = engines[name]
        except Exception as error:  # django.template.utils.InvalidTemplateEngineError
            raise ImproperlyConfigured(f"Prompt templates name the engine {name!r}: {error}") from None
        if not isinstance(backend, DjangoTemplates):
            raise ImproperlyConfigured(f"Prompt templates need a DjangoTemplates engine; TEMPLATES alias {name!r} "
                                       f"is {type(backend).__module__}.{type(backend).__qualname__}.")
        return backend.engine
    for backend in engines.all():
        if isinstance(backend, DjangoTemplates):
            return backend.engine
    return None


def file_prompt_engine(name: str | None = None) -> Engine:
    """
    The engine that loads a prompt template by name: the project's (see
    :func:`project_prompt_engine`); ``ImproperlyConfigured`` with what to add when it has none.
    """
    engine = project_prompt_engine(name)
    if engine is None:
        raise ImproperlyConfigured(f"Prompt template files are loaded through a DjangoTemplates engine, and TEMPLATES "
                                   f"has none. {ENGINE_HINT}")
    return engine


def string_prompt_engine(name: str | None = None) -> Engine:
    """The engine that compiles a prompt template given as a string: the project's, else django_mcp's own."""
    return project_prompt_engine(name) or own_engine()


def own_engine() -> Engine:
    """django_mcp's engine for string templates in projects without a DjangoTemplates engine (made once)."""
    global _own_engine
    engine = _own_engine
    if engine is None:
        with _lock:
            if _own_engine is None:
                # dirs=[] and no app directories: this engine loads no file, so a project whose app
                # templates are Jinja2 never has them read as Django templates.
                _own_engine = Engine(dirs=[], app_dirs=False, debug=settings.DEBUG,
                                     libraries=dict(get_installed_libraries()))
            engine = _own_engine
    return engine


@receiver(setting_changed)
def _forget_own_engine(*, setting: str, **kwargs: Any) -> None:
    # Tests change these with override_settings; Django resets its own engines the same way.
    global _own_engine
    if setting in {"TEMPLATES", "INSTALLED_APPS", "DEBUG"}:
        _own_engine = None
