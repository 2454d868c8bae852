"""ASGI entry point: Django for the site and admin, django_mcp at /mcp."""

import os

from django.core.asgi import get_asgi_application

from example_project.tracing import configure_tracing


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
configure_tracing()  # OpenTelemetry, when asked for (example_project/tracing.py)
django_asgi_app = get_asgi_application()

import django_mcp.asgi  # noqa: E402  (needs the app registry, which get_asgi_application() sets up)


application = django_mcp.asgi.application(django_asgi_app)
