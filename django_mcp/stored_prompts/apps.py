from django.apps import AppConfig, apps
from django.core.exceptions import ImproperlyConfigured


class StoredPromptsConfig(AppConfig):
    """Prompts staff write in the admin, rendered as templates (builds on django_mcp.template_prompts)."""

    name = "django_mcp.stored_prompts"
    label = "django_mcp_stored_prompts"
    verbose_name = "MCP prompts"
    default_auto_field = "django.db.models.BigAutoField"

    #: The feature apps this one builds on.
    requires = ("django_mcp.template_prompts",)

    def ready(self) -> None:
        missing = [app for app in self.requires if not apps.is_installed(app)]
        if missing:
            raise ImproperlyConfigured(f"{self.name} builds on {', '.join(missing)}: add it to INSTALLED_APPS "
                                       "(stored prompts are templates, rendered as template prompts).")
        from ..sites import get_default_site
        from .signals import connect
        from .sources import DatabasePrompts

        connect()
        # Before the prompt files, whose names the rows override (DatabasePrompts.order).
        get_default_site().add_source_once(DatabasePrompts(get_default_site()))
