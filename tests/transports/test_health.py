"""
Liveness and readiness (django_mcp/transports/health.py): in process through
``django_mcp.asgi.application``, and on real daphne servers whose channel layer or database is a
port nothing listens on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx2
import pytest
from django.core.asgi import get_asgi_application

import django_mcp.asgi
from django_mcp.transports import health
from tests.live import LiveServer, free_port
from tests.plain_http import request


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def app(settings):
    # Building the application freezes the start-up objects: slow, and beside the point here.
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "FREEZE_STARTUP_OBJECTS": False}
    return django_mcp.asgi.application(get_asgi_application())


async def test_liveness_answers_whatever_the_host(app):
    # A probe addresses the worker by its IP, which ALLOWED_HOSTS does not list.
    status, headers, body = await request(app, "/healthz")
    assert status == 200 and json.loads(body) == {"status": "ok"}
    assert headers[b"cache-control"] == b"no-store"


async def test_readiness_checks_the_database_and_the_channel_layer(app):
    status, _, body = await request(app, "/readyz/")
    assert status == 200
    assert json.loads(body) == {"status": "ready", "checks": {"database": "ok", "channel_layer": "ok"}}


async def test_head_gets_the_status_without_a_body_and_other_methods_405(app):
    assert (await request(app, "/readyz", "HEAD"))[::2] == (200, b"")
    status, headers, _ = await request(app, "/healthz", "POST")
    assert status == 405 and headers[b"allow"] == b"GET, HEAD"


async def test_a_check_that_fails_or_hangs_makes_the_worker_unavailable(app, monkeypatch):
    async def hangs() -> None:
        import asyncio

        await asyncio.sleep(60)

    async def fails() -> None:
        raise ConnectionRefusedError("secret-host:6379")

    monkeypatch.setattr(health, "READINESS_TIMEOUT_SECONDS", 0.2)
    monkeypatch.setitem(health.CHECKS, "database", hangs)
    monkeypatch.setitem(health.CHECKS, "channel_layer", fails)
    status, _, body = await request(app, "/readyz")
    assert status == 503
    assert json.loads(body) == {"status": "unavailable", "checks": {
        "database": "timed out after 0.2 s", "channel_layer": "failed: ConnectionRefusedError"}}
    assert b"secret-host" not in body  # the class of the failure, never its message


async def test_the_paths_follow_the_settings_and_none_leaves_them_out(app, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "HEALTH_PATH": "ops/alive", "READINESS_PATH": None}
    assert (await request(app, "/ops/alive"))[0] == 200
    assert (await request(app, "/readyz", host=b"testserver"))[0] == 404  # Django's, not ours


# --- real servers -----------------------------------------------------------------------------


def serve(env: Mapping[str, str], name: str) -> tuple[int, dict]:
    with LiveServer(env=env, name=name) as server:
        live = httpx2.get(server.url + "/healthz", timeout=10)
        ready = httpx2.get(server.url + "/readyz", timeout=10)
    assert live.status_code == 200
    return ready.status_code, ready.json()


def test_a_worker_whose_channel_layer_is_down_is_not_ready(sqlite_server_env: Mapping[str, str]) -> None:
    env = {**sqlite_server_env, "MCP_TEST_CHANNEL_LAYER": "redis", "MCP_TEST_REDIS_PORT": str(free_port())}
    status, body = serve(env, "health-no-redis")
    assert status == 503 and body["checks"]["database"] == "ok"
    assert body["checks"]["channel_layer"] != "ok"


def test_a_worker_whose_database_is_down_is_not_ready(sqlite_server_env: Mapping[str, str]) -> None:
    env = {**sqlite_server_env, "MCP_TEST_DATABASE": "postgres", "MCP_TEST_PG_PORT": str(free_port())}
    status, body = serve(env, "health-no-postgres")
    assert status == 503 and body["checks"]["channel_layer"] == "ok"
    assert body["checks"]["database"] != "ok"
