from django.apps import AppConfig


class UiConfig(AppConfig):
    """Interactive views from Django templates (the MCP Apps extension; see the package docstring)."""

    name = "django_mcp.ui"
    label = "django_mcp_ui"
    verbose_name = "MCP views"
    #: The options this app reads, accepted by ``@tool()`` (django_mcp.primitives.options_added_by_apps).
    mcp_primitive_options = {"tool": {"view", "view_csp", "visibility"}}

    def ready(self) -> None:
        from ..hooks import register_hook
        from ..protocol.extensions import register_extension
        from ..sites import get_default_site
        from . import checks  # noqa: F401  (registers the system checks)
        from .hooks import ViewHook
        from .negotiation import UiExtension
        from .tool_views import ToolViews

        register_extension(UiExtension())
        register_hook(ViewHook())
        get_default_site().add_source_once(ToolViews(get_default_site()))
