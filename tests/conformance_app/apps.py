from django.apps import AppConfig


class ConformanceAppConfig(AppConfig):
    """The tools, resources and prompts the official MCP conformance suite calls (see ``mcp.py``)."""

    name = "tests.conformance_app"
    label = "conformance_app"
    verbose_name = "MCP conformance fixtures"
