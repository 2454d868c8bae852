"""
Settings for the test suite and for ``scripts/conformance-server``.

Environment variables choose the services, so the same settings serve the fast in-process
tests (SQLite, in-memory channel layer, no service needed) and the multi-worker tests that run
several daphne processes on PostgreSQL with ``channels_redis``:

- ``MCP_TEST_DATABASE``: ``postgres`` to use PostgreSQL on 127.0.0.1:5432 (database from
  ``MCP_TEST_PG_NAME``, default ``test``), ``mariadb`` to use MariaDB (or MySQL) on
  127.0.0.1:3306 as root (the query guard's run there); anything else means SQLite at
  ``MCP_TEST_SQLITE``.
- ``MCP_TEST_CHANNEL_LAYER``: ``redis`` to use ``channels_redis`` on 127.0.0.1:6379 with the
  prefix ``MCP_TEST_REDIS_PREFIX``; anything else means the in-memory layer.
- ``MCP_TEST_TASKS``: ``db`` to run MCP tasks on the task framework's database backend (a
  ``db_worker`` process runs them); anything else runs them in the server process.
"""

import os
from pathlib import Path

import django


BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "django-mcp-tests-not-secret"
# MCP_TEST_DEBUG=1: a project in development, whose daphne serves its static files as runserver
# does (django_mcp.asgi; the browser tests load the admin's CSS from the server under test).
DEBUG = os.environ.get("MCP_TEST_DEBUG") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "testserver"]
USE_TZ = True
ROOT_URLCONF = "tests.urls"
ASGI_APPLICATION = "tests.asgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "daphne",
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
    "django_mcp.metrics",
    "django_mcp.tasks",
    "django_mcp.ui",
    "django_mcp.tracing",
    "tests.conformance_app",
    "tests.testapp",
    "tests.catalogue",
    "tests.querying",
    # DRF's token model, for django_mcp.drf.DRFAuthentication's tests (tests/drf/test_authentication.py).
    "rest_framework",
    "rest_framework.authtoken",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Prompt templates of tests/template_prompts (files under mcp/prompts/ are prompts on the default site).
        "DIRS": [BASE_DIR / "tests" / "template_prompts" / "templates"],
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

# The task framework's database backend, for durable MCP tasks (tests/tasks): its app is always
# installed so its table exists; TASKS uses it only where a test asks (MCP_TEST_TASKS=db), with a
# db_worker process running the work. Otherwise Django's immediate backend, so django_mcp.tasks
# runs tasks in the server process. On Django 5.2 the task framework is the django-tasks backport.
INSTALLED_APPS += [*(["django_tasks"] if django.VERSION < (6, 0) else []), "django_tasks_db"]
if os.environ.get("MCP_TEST_TASKS") == "db":
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

if os.environ.get("MCP_TEST_WITHOUT_TOOL_ADMIN") == "1":
    # benchmarks/tool_admin.py's "core" variant: the tool admin, call log and query tools not installed.
    INSTALLED_APPS = [app for app in INSTALLED_APPS
                      if app not in {"django_mcp.tool_admin", "django_mcp.call_log", "django_mcp.query_tools"}]

if os.environ.get("MCP_TEST_WITHOUT_TASKS") == "1":
    # benchmarks/run.py's default servers: django_mcp as a project installs it by default, without
    # the optional tasks app (whose hook takes part in every tools/call and tools/list).
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "django_mcp.tasks"]

if os.environ.get("MCP_TEST_WITHOUT_UI") == "1":
    # benchmarks/run.py's default servers: django_mcp as a project installs it by default, without
    # the optional views app (whose hook takes part in every tools/call and tools/list).
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "django_mcp.ui"]

if os.environ.get("MCP_TEST_WITHOUT_TRACING") == "1":
    # benchmarks/instructions.py: django_mcp without the optional tracing app, beside a server with it.
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "django_mcp.tracing"]

if os.environ.get("MCP_TEST_WITHOUT_METRICS") == "1":
    # benchmarks/run.py measures django_mcp as a project installs it by default, without the
    # optional metrics app, beside a server with it.
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "django_mcp.metrics"]

if os.environ.get("MCP_TEST_DATABASE") == "postgres":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": os.environ.get("MCP_TEST_PG_NAME", "test"),
            # Overridable so tests/faults can put a TCP relay in between and cut it.
            "HOST": os.environ.get("MCP_TEST_PG_HOST", "127.0.0.1"),
            "PORT": os.environ.get("MCP_TEST_PG_PORT", "5432"),
            "USER": os.environ.get("MCP_TEST_PG_USER", "postgres"),
            "TEST": {"NAME": os.environ.get("MCP_TEST_PG_TEST_NAME", "test_django_mcp")},
            "CONN_MAX_AGE": 60,
            # A kept connection the database dropped (a restart, a failover) is replaced before use
            # instead of failing the next request (system check django_mcp.W006).
            "CONN_HEALTH_CHECKS": True,
        }
    }
elif os.environ.get("MCP_TEST_DATABASE") == "mariadb":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.mysql",
            "NAME": os.environ.get("MCP_TEST_MARIADB_NAME", "test"),
            "HOST": os.environ.get("MCP_TEST_MARIADB_HOST", "127.0.0.1"),
            "PORT": os.environ.get("MCP_TEST_MARIADB_PORT", "3306"),
            "USER": os.environ.get("MCP_TEST_MARIADB_USER", "root"),
            "PASSWORD": os.environ.get("MCP_TEST_MARIADB_PASSWORD", ""),
            "OPTIONS": {"charset": "utf8mb4"},
            "TEST": {"NAME": os.environ.get("MCP_TEST_MARIADB_TEST_NAME", "test_django_mcp"),
                     "CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"},
        }
    }
    # Django converts datetimes to another zone than UTC with CONVERT_TZ, which needs the server's
    # time zone tables (mariadb-tzinfo-to-sql), empty on a fresh install: the run here is in UTC.
    TIME_ZONE = "UTC"
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("MCP_TEST_SQLITE", str(BASE_DIR / ".tmp" / "tests.sqlite3")),
            # Live daphne servers share one file with the migrate step; wait for locks rather than fail.
            # WAL with synchronous=NORMAL: a session's writes need no fsync each (Django >= 5.1).
            # IMMEDIATE: a transaction takes the write lock when it begins, so one that read first
            # (the admin's change form) waits for another writer instead of failing at once with
            # "database is locked" when it comes to write (Django >= 5.1).
            "OPTIONS": {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                        "transaction_mode": "IMMEDIATE"},
            # Keep connections across requests: legacy sessions read their row on every POST.
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
            # A test database in a file another process can open (the live_mcp_server fixture's
            # tests, tests/test/test_live_fixture.py); by default Django's in memory.
            "TEST": {"NAME": os.environ.get("MCP_TEST_SQLITE_TEST_NAME")},
        }
    }

if os.environ.get("MCP_TEST_CHANNEL_LAYER") == "redis":
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [(os.environ.get("MCP_TEST_REDIS_HOST", "127.0.0.1"),
                           int(os.environ.get("MCP_TEST_REDIS_PORT", "6379")))],
                "prefix": os.environ.get("MCP_TEST_REDIS_PREFIX", "django_mcp_tests"),
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

STATIC_URL = "static/"

# Uploaded files of the model-resource tests (tests/catalogue).
MEDIA_ROOT = os.environ.get("MCP_TEST_MEDIA_ROOT", str(BASE_DIR / ".tmp" / "media"))

# DRF's own defaults (session, Basic) and its token class: what an API beside the MCP endpoint uses.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
}

DJANGO_MCP = {
    "SERVER_NAME": "django-mcp-tests",
    # The site /mcp serves: tests/catalogue's live tests serve "tests.catalogue.sites.site".
    "SITE": os.environ.get("MCP_TEST_SITE", "django_mcp.sites.McpSite"),
    # The defaults plus the API-key example of the authentication seam (tests/testapp/authentication.py):
    # a request without the header is served as before.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "django_mcp.authentication.SessionAuthentication",
        "django_mcp.authentication.ProcessUserAuthentication",
        "tests.testapp.authentication.ApiKeyAuthentication",
        "django_mcp.oauth.authentication.OAuth2Authentication",
        "django_mcp.oauth.authentication.PersonalAccessTokenAuthentication",
        # REST_FRAMEWORK's classes (below): an API token calls tools too. Last, so a bearer token is
        # the OAuth classes' to judge; a request without an Authorization header skips it at once.
        "django_mcp.drf.DRFAuthentication",
    ],
    # Live OAuth tests (tests/oauth) serve the endpoints with authentication required.
    "REQUIRE_AUTHENTICATION": os.environ.get("MCP_TEST_OAUTH") == "1",
    # The API-key example's scopes (mcp:read, mcp:write) are not django_mcp.oauth's per-kind scopes:
    # kinds ask for nothing, except on the OAuth test servers.
    "REQUIRED_SCOPES": None if os.environ.get("MCP_TEST_OAUTH") == "1" else {},
    # The tool admin and its call log read and write the database on every listing and call; most
    # tests run without one, so they are on only where a test asks (tests/tool_admin/ and
    # live servers started with MCP_TEST_TOOL_ADMIN=1).
    "TOOL_ADMIN": os.environ.get("MCP_TEST_TOOL_ADMIN") == "1",
    # MCP_TEST_CALL_LOG=0 keeps the log off with the admin on (benchmarks/tool_admin.py's variant A0).
    "CALL_LOG": os.environ.get("MCP_TEST_CALL_LOG", os.environ.get("MCP_TEST_TOOL_ADMIN")) == "1",
    # Short keep-alives so tests can observe them without waiting long.
    "SSE_KEEPALIVE_SECONDS": float(os.environ.get("MCP_TEST_KEEPALIVE", "15")),
    # How often a stream's credential is checked again (tests/oauth/test_stream_credentials.py: often).
    "STREAM_CREDENTIAL_CHECK_SECONDS": float(os.environ.get("MCP_TEST_CREDENTIAL_CHECK", "30")),
    # How soon a resumed stream gives up on a request whose worker stopped answering probes: short,
    # so tests that kill a worker see the error quickly; long enough for a loaded CI machine.
    "STREAM_LIVENESS_SECONDS": float(os.environ.get("MCP_TEST_LIVENESS", "3")),
    # The suite opens thousands of anonymous sessions from 127.0.0.1 against a few long-lived
    # servers and leaves most to expire; the limit itself is tested with its own settings
    # (tests/transports/test_session_limits.py).
    "MAX_SESSIONS_PER_USER": int(os.environ.get("MCP_TEST_MAX_SESSIONS", "1000000")),
}

# OAuth on django-oauth-toolkit, as django_mcp.oauth recommends; login through the plain page it ships.
from django_mcp.oauth.provider import oauth2_provider_settings  # noqa: E402

OAUTH2_PROVIDER = oauth2_provider_settings()
LOGIN_URL = "/accounts/login/"
# Logins in the live OAuth tests: a fast hasher keeps them from dominating the run (tests only).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if os.environ.get("MCP_TEST_OAUTH") == "1":
    # The live OAuth servers: bearer tokens first, so a missing one is answered with their challenge,
    # and tests/oauth/mcp.py's tool that needs a scope beyond the defaults (step-up).
    DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"] = [
        "django_mcp.oauth.authentication.OAuth2Authentication",
        "django_mcp.oauth.authentication.PersonalAccessTokenAuthentication",
        "django_mcp.authentication.SessionAuthentication",
    ]
    INSTALLED_APPS.append("tests.oauth")
    # Resource servers this one is the authorization server of (tests/oauth/test_external_server.py).
    DJANGO_MCP["OAUTH_OTHER_RESOURCES"] = [uri for uri in os.environ.get("MCP_TEST_OTHER_RESOURCES", "").split(",") if uri]
    # The consent page shows the server's icon (tests/oauth/test_browser.py): a 48x48 SVG, inline.
    DJANGO_MCP["SERVER_ICONS"] = [{"src": "data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnIHdpZHRoPSc0OCcgaGVpZ2h0PSc0OCcgdmlld0JveD0nMCAwIDQ4IDQ4Jz48cmVjdCB3aWR0aD0nNDgnIGhlaWdodD0nNDgnIHJ4PScxMCcgZmlsbD0nIzI0NTdkNicvPjxwYXRoIGQ9J00xNCAxMmgxNGE2IDYgMCAwIDEgNiA2djE4SDIwYTYgNiAwIDAgMS02LTZ6JyBmaWxsPScjZmZmJy8+PC9zdmc+",
                                   "mimeType": "image/svg+xml", "sizes": ["48x48"]}]
OAUTH2_PROVIDER["SCOPES"]["tests:secrets"] = "Read the test suite's secrets"

if os.environ.get("MCP_TEST_EXTERNAL_ISSUER"):
    # A resource server whose tokens come from another live server (tests/oauth/test_external_server.py):
    # that issuer (a JSON entry of OAUTH_EXTERNAL_ISSUERS) is trusted first.
    import json  # noqa: E402

    DJANGO_MCP["OAUTH_EXTERNAL_ISSUERS"] = [json.loads(os.environ["MCP_TEST_EXTERNAL_ISSUER"])]
    DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"] = ["django_mcp.oauth.external.ExternalTokenAuthentication",
                                                    *DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django_mcp": {"handlers": ["stderr"], "level": os.environ.get("MCP_TEST_LOG_LEVEL", "WARNING")}},
}
