"""
Django settings for building the documentation (docs/conf.py): every feature app installed, so
autodoc can import each module and the generated references see every setting, check and
command. Nothing is served and no database is opened.
"""

from importlib.util import find_spec

SECRET_KEY = "django-mcp-docs-not-secret"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "oauth2_provider",
    "django_mcp",
    "django_mcp.model_resources",
    "django_mcp.template_prompts",
    "django_mcp.stored_prompts",
    "django_mcp.tool_admin",
    "django_mcp.call_log",
    "django_mcp.query_tools",
    "django_mcp.oauth",
    "django_mcp.ui",
]
# Optional feature apps whose extra dependency may be absent: documented when importable.
for _app, _needs in [("django_mcp.metrics", "prometheus_client")]:
    if find_spec(_app) is not None and find_spec(_needs) is not None:
        INSTALLED_APPS.append(_app)

TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True, "OPTIONS": {}}]
STATIC_URL = "static/"
