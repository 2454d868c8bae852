"""
An API-only project: no ``DjangoTemplates`` engine in ``TEMPLATES`` (and so no admin), as a project
written from the README's "Using it in your project" section may be. Prompts in code and in the
database are served; the prompt file in this app's ``templates/mcp/prompts/`` is not
(tests/template_prompts/test_without_django_templates.py).
"""

import os

from tests.settings import BASE_DIR, CHANNEL_LAYERS, DATABASES, DEFAULT_AUTO_FIELD, SECRET_KEY, USE_TZ  # noqa: F401


DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
ROOT_URLCONF = "tests.template_prompts.api_only.urls"
ASGI_APPLICATION = "tests.asgi.application"

INSTALLED_APPS = [
    "daphne",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "channels",
    "django_mcp",
    "django_mcp.template_prompts",
    "django_mcp.stored_prompts",
    "tests.template_prompts.api_only",
]

# MCP_TEST_JINJA2=1: the project renders its own pages with Jinja2 (jinja2 is in the test extra).
TEMPLATES = [{"BACKEND": "django.template.backends.jinja2.Jinja2", "APP_DIRS": True}] if os.environ.get(
    "MCP_TEST_JINJA2") == "1" else []

DJANGO_MCP = {"SERVER_NAME": "api-only"}
