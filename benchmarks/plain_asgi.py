"""
ASGI entry point of ``plain_view.py``'s uvicorn server of the plain view: Django's own ASGI handler
(``get_asgi_application()``, no Channels routing) on ``benchmarks.plain_settings``::

    uvicorn --lifespan off benchmarks.plain_asgi:application
"""

import os

from django.core.asgi import get_asgi_application

# Not setdefault: tests.live.server_env (the servers' environment) names tests.settings.
os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.plain_settings"
application = get_asgi_application()
