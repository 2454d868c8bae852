from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured


class TracingConfig(AppConfig):
    """OpenTelemetry spans and metrics of every MCP operation, by the MCP semantic conventions."""

    name = "django_mcp.tracing"
    label = "django_mcp_tracing"
    verbose_name = "MCP tracing"

    def ready(self) -> None:
        try:
            import opentelemetry.trace  # noqa: F401
        except ImportError:
            raise ImproperlyConfigured(
                'django_mcp.tracing needs opentelemetry-api: pip install "django-mcpkit[tracing]"') from None
        from ..hooks import register_hook
        from .sessions import connect_receivers
        from .spans import tracing_hook

        register_hook(tracing_hook)
        connect_receivers()
