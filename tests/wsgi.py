"""WSGI entry point for live gunicorn servers: the plain view (``django_mcp.views.McpView``) at ``/mcp``."""

import os

from django.core.wsgi import get_wsgi_application


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
application = get_wsgi_application()
