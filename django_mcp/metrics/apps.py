from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured


class MetricsConfig(AppConfig):
    """Prometheus metrics of each worker at ``/metrics`` (``DJANGO_MCP["METRICS_PATH"]``)."""

    name = "django_mcp.metrics"
    label = "django_mcp_metrics"
    verbose_name = "MCP metrics"

    def ready(self) -> None:
        try:
            import prometheus_client  # noqa: F401
        except ImportError:
            raise ImproperlyConfigured(
                'django_mcp.metrics needs prometheus-client: pip install "django-mcpkit[metrics]"') from None
        from ..conf import mcp_settings
        from ..endpoints import add_endpoint
        from .endpoint import metrics_app
        from .receivers import connect_receivers

        connect_receivers()
        add_endpoint("metrics", metrics_app, path=lambda: mcp_settings.METRICS_PATH)
