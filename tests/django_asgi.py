"""
Django's own ASGI handler, without Channels' routing, for live uvicorn servers: ``/mcp`` is the
plain view (``django_mcp.views.McpView``) in ``tests.urls``.
"""

import os

from django.core.asgi import get_asgi_application


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
application = get_asgi_application()
