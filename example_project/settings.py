"""
Settings of the example project: a small library catalogue served as an MCP server.

Needs no service: SQLite and the in-memory channel layer. For several workers, point DATABASES at
PostgreSQL and CHANNEL_LAYERS at ``channels_redis`` (see README).
"""

import importlib.util
import os
from pathlib import Path

import django


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
    "rest_framework",
    "rest_framework.authtoken",  # the REST API's tokens, which MCP clients may use too
    "oauth2_provider",
    "django_mcp",
    # OpenTelemetry spans of every MCP request (pip install "django-mcpkit[tracing]"); first of
    # django_mcp's apps, so its spans time the others' hooks too. example_project/tracing.py
    # configures the SDK when asked (scripts/demo writes the spans to .tmp/demo-traces.jsonl).
    *(["django_mcp.tracing"] if importlib.util.find_spec("opentelemetry.trace") else []),
    "django_mcp.model_resources",
    "django_mcp.template_prompts",
    "django_mcp.stored_prompts",
    "django_mcp.tool_admin",
    "django_mcp.call_log",
    "django_mcp.query_tools",
    "django_mcp.oauth",
    # Prometheus metrics of each worker at /metrics (pip install "django-mcpkit[metrics]").
    "django_mcp.metrics",
    # Long tool calls as durable MCP tasks (pip install "django-mcpkit[tasks]"), run by the task
    # framework's database backend: scripts/demo starts its worker (manage.py db_worker).
    "django_mcp.tasks",
    *(["django_tasks"] if django.VERSION < (6, 0) else []),  # the task framework's backport on Django 5.2
    "django_tasks_db",
    # Interactive views from templates (the MCP Apps extension): search_books and my_loans show
    # theirs (library/templates/library/views/) in hosts that render views.
    "django_mcp.ui",
    "example_project.library",
]

# Django's task framework: MCP tasks (django_mcp.tasks) go to the database, and `manage.py
# db_worker` runs them, so a task outlives the server process that made it.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

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
        "CONN_HEALTH_CHECKS": True,
        # WAL with synchronous=NORMAL: readers do not wait for writers, and a commit (a new MCP
        # session, say) is not an fsync. A good default for SQLite behind a web server.
        # IMMEDIATE: a transaction that reads before it writes (the admin's forms) waits for other
        # writers (the call log, session changes) instead of failing with "database is locked".
        "OPTIONS": {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                    "transaction_mode": "IMMEDIATE"},
    }
}

CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# API keys for MCP clients, key → username (see library/authentication.py); the demo data creates
# the librarian. Never keep real keys in settings files: read them from the environment.
LIBRARY_API_KEYS = {os.environ.get("DEMO_API_KEY", "librarian-demo-key"): "librarian",
                    os.environ.get("DEMO_READER_KEY", "reader-demo-key"): "reader"}

# DEMO_OAUTH=1: every MCP endpoint needs a bearer token, which clients get through OAuth 2.1 on
# django-oauth-toolkit (discovery from the 401, dynamic registration, login, consent, PKCE).
DEMO_OAUTH = os.environ.get("DEMO_OAUTH") == "1"

# DEMO_TOOL_SEARCH=1: tools/list shows a few pinned tools plus search_tools and call_tool, and the
# model finds the others by search (django_mcp.tool_search; library/mcp.py turns it on).
DEMO_TOOL_SEARCH = os.environ.get("DEMO_TOOL_SEARCH") == "1"

# The REST API at /api/: DRF's default classes and its token, which the demo gives the reader.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
}

DJANGO_MCP = {
    "SERVER_NAME": "django-mcp-library",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Bearer tokens first: with authentication required, their challenge is what clients follow.
        "django_mcp.oauth.authentication.OAuth2Authentication",
        "django_mcp.oauth.authentication.PersonalAccessTokenAuthentication",
        "django_mcp.authentication.SessionAuthentication",
        "django_mcp.authentication.ProcessUserAuthentication",
        "example_project.library.authentication.ApiKeyAuthentication",
        # The REST API's own credentials (REST_FRAMEWORK below): its token calls tools as well.
        "django_mcp.drf.DRFAuthentication",
    ],
    "REQUIRE_AUTHENTICATION": DEMO_OAUTH,
    # Where clients reach the server; behind a proxy, its public https:// address.
    "PUBLIC_BASE_URL": os.environ.get("DEMO_PUBLIC_BASE_URL") or None,
    "SERVER_TITLE": "Library catalogue (django_mcp example)",
    "SERVER_DESCRIPTION": "The books, authors and loans of a small library: search, lend and return books.",
    # An inline SVG (a book), so the demo needs no static file server for its icon.
    "SERVER_ICONS": [{"src": (
                              "data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnIHdpZHRoPSc2NCcgaG"
                              "VpZ2h0PSc2NCcgdmlld0JveD0nMCAwIDY0IDY0Jz48cmVjdCB3aWR0aD0nNjQnIGhlaWdodD0nNjQnIHJ4PScxNCcgZmlsbD"
                              "0nIzdhM2UxZCcvPjxwYXRoIGQ9J00xNiAxNGgyMmE4IDggMCAwIDEgOCA4djI4SDI0YTggOCAwIDAgMS04LTh6JyBmaWxsPS"
                              "cjZjZlYWQ4Jy8+PHBhdGggZD0nTTIyIDIyaDE2TTIyIDI5aDE2TTIyIDM2aDEwJyBzdHJva2U9JyM3YTNlMWQnIHN0cm9rZS"
                              "13aWR0aD0nMycgc3Ryb2tlLWxpbmVjYXA9J3JvdW5kJy8+PC9zdmc+"),
                       "mimeType": "image/svg+xml", "sizes": ["64x64"]}],
    "INSTRUCTIONS": "A library catalogue. Use search_books to find books, then read book resources for details.",
    # What the catalogue offers clients, committed: `manage.py mcp_contracts --check` fails (and
    # `manage.py check` warns, django_mcp.W010) when a change to the tools would break a client.
    "CONTRACTS_FILE": BASE_DIR / "example_project" / "mcp_contracts.json",
}

# django-oauth-toolkit configured for MCP clients (public clients, PKCE S256, open registration with
# loopback or HTTPS redirects, refresh rotation); the login page is a plain one django_mcp ships.
from django_mcp.oauth.provider import oauth2_provider_settings  # noqa: E402

OAUTH2_PROVIDER = oauth2_provider_settings()
LOGIN_URL = "/accounts/login/"

# The request log: one line per MCP request ("mcp_request method=tools/call target=search_books
# outcome=ok ...") on the terminal. DEMO_REQUEST_LOG=0 keeps it quiet.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    # propagate False: daphne's command line gives the root logger a handler (logging.basicConfig),
    # which would write every line a second time.
    "loggers": {"django_mcp.requests": {
        "handlers": ["console"], "level": "WARNING" if os.environ.get("DEMO_REQUEST_LOG") == "0" else "INFO",
        "propagate": False}},
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
