from django.apps import AppConfig


class TemplatePromptsConfig(AppConfig):
    """Prompts from Django templates: the files under ``mcp/prompts/``, ``TemplatePrompt``, ``{% load mcp_prompts %}``."""

    name = "django_mcp.template_prompts"
    label = "django_mcp_template_prompts"
    verbose_name = "MCP template prompts"

    def ready(self) -> None:
        from ..sites import get_default_site
        from . import checks  # noqa: F401  (registers the system checks)
        from .files import TemplatePromptFiles

        # Every template under mcp/prompts/ is a prompt of the default site (docs/prompts.md).
        get_default_site().add_source_once(TemplatePromptFiles(get_default_site()))
