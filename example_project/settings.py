"""
Settings of the example project: a small library catalogue served as an MCP server.

Needs no service: SQLite and the in-memory channel layer. For several workers, point DATABASES at
PostgreSQL and CHANNEL_LAYERS at ``channels_redis`` (see README).
"""

import os
from pathlib import Path


BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-project-insecure-key-change-me")
DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_mcp",
    "example_project.library",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"
ASGI_APPLICATION = "example_project.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The project's own templates; those under templates/mcp/prompts/ are MCP prompts.
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("DEMO_SQLITE", str(BASE_DIR / "db.sqlite3")),
        "CONN_MAX_AGE": 60,
        # WAL with synchronous=NORMAL: readers do not wait for writers, and a commit (a new MCP
        # session, say) is not an fsync. A good default for SQLite behind a web server.
        "OPTIONS": {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
    }
}

CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# API keys for MCP clients, key → username (see library/authentication.py); the demo data creates
# the librarian. Never keep real keys in settings files: read them from the environment.
LIBRARY_API_KEYS = {os.environ.get("DEMO_API_KEY", "librarian-demo-key"): "librarian",
                    os.environ.get("DEMO_READER_KEY", "reader-demo-key"): "reader"}

DJANGO_MCP = {
    "SERVER_NAME": "django-mcp-library",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "django_mcp.authentication.SessionAuthentication",
        "django_mcp.authentication.ProcessUserAuthentication",
        "example_project.library.authentication.ApiKeyAuthentication",
    ],
    "SERVER_TITLE": "Library catalogue (django_mcp example)",
    "INSTRUCTIONS": "A library catalogue. Use search_books to find books, then read book resources for details.",
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
