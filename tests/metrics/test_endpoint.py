"""
The metrics endpoint in process, through ``django_mcp.asgi.application``: methods, the optional
bearer token, OpenMetrics for a scraper that asks for it, the path setting; and the receivers of
the signals no live test reaches cheaply (a channel layer that fails for good).
"""

from __future__ import annotations

import asyncio

import pytest
from django.core.asgi import get_asgi_application
from prometheus_client import REGISTRY

import django_mcp.asgi
from django_mcp.endpoints import added_endpoints
from django_mcp.fanout import layer_call
from tests.plain_http import request


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def app(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "FREEZE_STARTUP_OBJECTS": False}
    return django_mcp.asgi.application(get_asgi_application())


def test_the_app_adds_its_endpoint() -> None:
    assert [endpoint.name for endpoint in added_endpoints()] == ["metrics"]


async def test_metrics_answer_get_and_head_whatever_the_host(app) -> None:
    status, headers, body = await request(app, "/metrics")
    assert status == 200 and headers[b"content-type"].startswith(b"text/plain; version=0.0.4")
    assert b"# TYPE mcp_requests_total counter" in body and b"mcp_open_streams" in body
    assert (await request(app, "/metrics", method="HEAD"))[::2] == (200, b"")
    status, headers, _ = await request(app, "/metrics", method="POST")
    assert status == 405 and headers[b"allow"] == b"GET, HEAD"


async def test_openmetrics_for_a_scraper_that_prefers_it(app) -> None:
    accept = (b"accept", b"application/openmetrics-text; version=1.0.0")
    status, headers, body = await request(app, "/metrics", headers=[accept])
    assert status == 200 and headers[b"content-type"].startswith(b"application/openmetrics-text")
    assert body.endswith(b"# EOF\n")


async def test_a_bearer_token_guards_the_metrics_when_set(app, settings) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "METRICS_BEARER_TOKEN": "s3cret"}
    status, headers, body = await request(app, "/metrics")
    assert status == 401 and headers[b"www-authenticate"] == b'Bearer realm="metrics"' and b"mcp_" not in body
    assert (await request(app, "/metrics", headers=[(b"authorization", b"Bearer wrong")]))[0] == 401
    assert (await request(app, "/metrics", headers=[(b"authorization", b"Bearer s3cret")]))[0] == 200


async def test_the_path_follows_its_setting_and_none_serves_nothing(app, settings) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "METRICS_PATH": "ops/metrics"}
    assert (await request(app, "/ops/metrics"))[0] == 200
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "METRICS_PATH": None}
    assert (await request(app, "/metrics", host=b"testserver"))[0] == 404  # Django's answer, not ours


async def test_a_channel_layer_operation_that_fails_for_good_is_counted() -> None:
    before = REGISTRY.get_sample_value("mcp_channel_layer_errors_total", {"operation": "group_send"}) or 0.0

    async def group_send(*args: object) -> None:
        raise ConnectionError("the layer is away")

    with pytest.raises(ConnectionError):
        await asyncio.wait_for(layer_call(group_send, "mcp.broadcast", {}), 5)
    assert REGISTRY.get_sample_value("mcp_channel_layer_errors_total", {"operation": "group_send"}) == before + 1
