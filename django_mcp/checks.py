"""System checks (``manage.py check``): configuration mistakes that would otherwise fail quietly."""

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks

from .conf import DEFAULTS


@checks.register(checks.Tags.compatibility)
def check_configuration(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    if not apps.is_installed("channels"):
        messages.append(checks.Error(
            "django_mcp needs Channels.",
            hint='Add "channels" (and "daphne", first, to run the server with runserver) to INSTALLED_APPS.',
            id="django_mcp.E001",
        ))
    if not getattr(settings, "CHANNEL_LAYERS", None):
        messages.append(checks.Warning(
            "CHANNEL_LAYERS is not configured: list-changed and resource-updated notifications reach no client, "
            "and nothing crosses between workers.",
            hint='For one process: CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}; '
                 "for several, use channels_redis.",
            id="django_mcp.W001",
        ))
    user_settings = getattr(settings, "DJANGO_MCP", {}) or {}
    if not isinstance(user_settings, dict):
        messages.append(checks.Error("DJANGO_MCP must be a dict.", id="django_mcp.E002"))
        return messages
    for name in sorted(set(user_settings) - set(DEFAULTS)):
        messages.append(checks.Warning(
            f"Unknown DJANGO_MCP setting {name!r}; it has no effect.",
            hint=f"Known settings: {', '.join(sorted(DEFAULTS))}.",
            id="django_mcp.W002",
        ))
    return messages
