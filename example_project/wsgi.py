"""
WSGI entry point (``DEMO_SERVER=gunicorn scripts/demo``): the whole site, MCP included, as plain
Django views — ``/mcp`` is ``django_mcp.views.McpView`` in ``urls.py``. With ``DEBUG`` on, the admin's
static files are served here too, as ``runserver`` serves them (gunicorn serves none itself).
"""

import os

from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.wsgi import get_wsgi_application

from example_project.tracing import configure_tracing


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
configure_tracing()  # OpenTelemetry, when asked for (example_project/tracing.py)
application = get_wsgi_application()
if settings.DEBUG:
    application = StaticFilesHandler(application)
