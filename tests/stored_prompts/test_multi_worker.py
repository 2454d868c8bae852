"""
A staff edit on one worker reaches a client held by another: two daphne processes on one
PostgreSQL database and one ``channels_redis`` layer (the ``services`` fixture; skipped with its
reason when PostgreSQL on 127.0.0.1:5432 or Redis on 127.0.0.1:6379 is absent). The admin runs on
worker B, the MCP client talks to worker A, in both eras.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from tests.transports.workers import Workers, two_workers

from .admin_browser import AdminBrowser, create_superuser
from .test_live import MODES, admin_edit_reaches_client


@pytest.fixture(scope="module")
def workers(services: Mapping[str, str]) -> Iterator[Workers]:
    with two_workers(services, keepalive="2", prefix="prompts") as started:
        yield started


@pytest.fixture(scope="module")
def staff_on_b(workers: Workers) -> AdminBrowser:
    create_superuser(workers.env, "prompt-staff", "prompt-pw")
    browser = AdminBrowser(workers.b.url)
    browser.login("prompt-staff", "prompt-pw")
    return browser


@pytest.mark.parametrize("mode", MODES)
async def test_an_admin_edit_on_worker_b_reaches_a_client_on_worker_a(workers: Workers, staff_on_b: AdminBrowser,
                                                                       mode: str) -> None:
    print(workers.describe())
    await admin_edit_reaches_client(workers.a.mcp_url, staff_on_b, mode)
