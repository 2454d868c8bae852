"""
The example project deployed: several workers behind nginx, on PostgreSQL and Redis.

``scripts/fleet`` runs it (docs/howto/deployment.md); deploy/compose.yaml and
deploy/mcp-worker@.service point at it too. Everything that differs between machines comes from the
environment, the rest from ``example_project.settings``:

- ``DJANGO_SECRET_KEY`` (required): the same on every worker. Legacy session ids and the 2026-07-28
  ``requestState`` are signed with it, and any worker must verify what another one signed.
- ``PUBLIC_BASE_URL`` (required): the address clients use, nginx's (``https://mcp.example.com``). The
  OAuth metadata names it, and ``ALLOWED_HOSTS`` and ``CSRF_TRUSTED_ORIGINS`` follow from it.
- ``DJANGO_ALLOWED_HOSTS``: comma-separated host names, when more than the public one is served.
- ``POSTGRES_DB``, ``POSTGRES_HOST``, ``POSTGRES_PORT``, ``POSTGRES_USER``, ``POSTGRES_PASSWORD``:
  the database every worker shares (legacy sessions, stream events, the admin's rows).
- ``REDIS_URL`` and ``CHANNELS_PREFIX``: the channel layer every worker shares (notifications,
  answers and cancellations crossing workers), and the cache (the tool admin's rate limits).
- ``STATIC_ROOT`` (required): where ``collectstatic`` puts the files nginx serves under /static/.
"""

import os
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from example_project.settings import *  # noqa: F403  (the example's apps, middleware, templates, MCP setup)
from example_project.settings import DJANGO_MCP


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"example_project.settings_fleet needs the environment variable {name}.")
    return value


DEBUG = False
SECRET_KEY = _required("DJANGO_SECRET_KEY")

PUBLIC_BASE_URL = _required("PUBLIC_BASE_URL").rstrip("/")
_public = urlsplit(PUBLIC_BASE_URL)
if _public.scheme not in ("http", "https") or not _public.hostname:
    raise ImproperlyConfigured(f"PUBLIC_BASE_URL must be an http:// or https:// address, got {PUBLIC_BASE_URL!r}.")

# Django compares Host without its port, so the public host name is enough.
ALLOWED_HOSTS = [host.strip() for host in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",") if host.strip()] \
    or [_public.hostname]
# The admin's forms: a browser's Origin is the public address (scheme and port included).
CSRF_TRUSTED_ORIGINS = [PUBLIC_BASE_URL]

# TLS ends at nginx, which says so in X-Forwarded-Proto (and overwrites whatever a client sent,
# deploy/nginx.conf). Trust the header only behind such a proxy.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _public.scheme == "https"

DJANGO_MCP = {**DJANGO_MCP, "PUBLIC_BASE_URL": PUBLIC_BASE_URL}

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _required("POSTGRES_DB"),
        "HOST": os.environ.get("POSTGRES_HOST", "127.0.0.1"),
        "PORT": os.environ.get("POSTGRES_PORT", "5432"),
        "USER": os.environ.get("POSTGRES_USER", "postgres"),
        "PASSWORD": os.environ.get("POSTGRES_PASSWORD", ""),
        # One connection per worker thread, kept between requests and checked before reuse.
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
}

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")],
            # Fleets sharing one Redis keep apart by prefix.
            "prefix": os.environ.get("CHANNELS_PREFIX", "asgi"),
        },
    }
}

# The tool admin's rate limits count in the default cache (DJANGO_MCP["RATE_LIMIT_CACHE"]): one
# cache for every worker, or each would count on its own and allow N times the limit.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        "KEY_PREFIX": os.environ.get("CHANNELS_PREFIX", "asgi"),
    }
}

STATIC_URL = "static/"
STATIC_ROOT = _required("STATIC_ROOT")
