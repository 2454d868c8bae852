"""
A project with django_mcp's core app alone: no tool admin, call log, query tools, template or
stored prompts, model resources or OAuth (tests/test_core_only.py). It serves tools, resources and
prompts defined in code, over every transport, and migrates no feature table.
"""

from tests.settings import BASE_DIR, CHANNEL_LAYERS, DATABASES, DEFAULT_AUTO_FIELD, SECRET_KEY, USE_TZ  # noqa: F401


DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
ROOT_URLCONF = "tests.core_only.urls"
ASGI_APPLICATION = "tests.asgi.application"

INSTALLED_APPS = [
    "daphne",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "channels",
    "django_mcp",
    "tests.core_only",
]

TEMPLATES = []

DJANGO_MCP = {"SERVER_NAME": "core-only"}
