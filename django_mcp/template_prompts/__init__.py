"""
Prompts as Django templates: the feature app ``django_mcp.template_prompts`` (docs/prompts.md).

- every template under ``mcp/prompts/`` (in ``TEMPLATES["DIRS"]`` or an app's ``templates/``) is a
  prompt named by its path, found through the project's ``DjangoTemplates`` engine;
- :class:`~django_mcp.template_prompts.templates.TemplatePrompt`, the options class of a prompt
  whose messages a template renders, and its short form :func:`template_prompt`;
- ``{% load mcp_prompts %}``: ``{% message %}``, ``{% embed %}`` and ``{% image %}``.
"""

from typing import Any


__all__ = ["TemplatePrompt", "template_prompt"]


def template_prompt(*, site: Any = None, **options: Any) -> Any:
    """
    Register a function as a template prompt: it prepares the template's context from the
    arguments its signature declares (annotations convert them) and returns a dict::

        @template_prompt(template_name="library/plan.md")
        def plan(author: str) -> dict:
            return {"author": Author.objects.get(name=author)}

    ``site`` is the site to register on; None (the default) means ``django_mcp.site``. The keyword
    ``options`` are the prompt's options, as a ``TemplatePrompt`` subclass sets them
    (``template_name=`` ...); an unknown one raises ``TypeError``.
    """
    from ..sites import get_default_site
    from .templates import TemplatePrompt, template_prompt_from_function

    TemplatePrompt.check_options(options, "@template_prompt()")
    target = site if site is not None else get_default_site()

    def decorator(fn: Any) -> Any:
        target.add(template_prompt_from_function(fn, **options))
        return fn

    return decorator


def __getattr__(name: str) -> Any:
    # Loaded when first named: TemplatePrompt imports Django's forms and template engine, which
    # Django must not need while it imports this app to populate the registry.
    if name == "TemplatePrompt":
        from .templates import TemplatePrompt

        return TemplatePrompt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
