"""
WSGI entry point of ``plain_view.py``'s gunicorn servers: Django's WSGI handler on
``benchmarks.plain_settings`` (``tests.settings`` with the plain view at ``/mcp`` and the floor
views of ``benchmarks.plain_urls``)::

    gunicorn --workers 1 --worker-class sync benchmarks.plain_wsgi:application
"""

import os

from django.core.wsgi import get_wsgi_application

# Not setdefault: tests.live.server_env (the servers' environment) names tests.settings.
os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.plain_settings"
application = get_wsgi_application()
