from django.apps import AppConfig, apps
from django.core.exceptions import ImproperlyConfigured


class QueryToolsConfig(AppConfig):
    """Read-only query tools staff define in the admin, without code (builds on the tool admin and the model resources)."""

    name = "django_mcp.query_tools"
    label = "django_mcp_query_tools"
    verbose_name = "MCP query tools"
    default_auto_field = "django.db.models.BigAutoField"

    #: The feature apps this one builds on.
    requires = ("django_mcp.tool_admin", "django_mcp.model_resources")

    def ready(self) -> None:
        missing = [app for app in self.requires if not apps.is_installed(app)]
        if missing:
            raise ImproperlyConfigured(f"{self.name} builds on {', '.join(missing)}: add it to INSTALLED_APPS "
                                       "(each query tool has a row in the tool admin, and reads models as the model "
                                       "resources publish them).")
        from ..sites import get_default_site
        from .signals import connect
        from .source import add_query_tool_source

        connect()
        add_query_tool_source(get_default_site())
