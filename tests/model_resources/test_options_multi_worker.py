"""
Model-resource notifications across workers: two daphne processes on PostgreSQL with the
``channels_redis`` layer serve the catalogue site. Clients subscribe through worker A; staff save
the row in the admin of worker B; the change reaches the users who may see the row, and only them.
Needs the services (see ``tests/conftest.py``: skipped without them, a failure under CI=true).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping

import pytest

from tests.live import migrate
from tests.model_resources.test_options_live import MODES, catalogue_env, fill, watch_admin_saves
from tests.transports.workers import Workers, two_workers


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def workers(services: Mapping[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    import psycopg
    from psycopg import sql

    # A database of its own: the catalogue's users and rows must not meet other tests' data.
    name = f"{services['MCP_TEST_PG_NAME']}_catalogue_{uuid.uuid4().hex[:6]}"
    admin_dsn = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    env = catalogue_env(tmp_path_factory.mktemp("catalogue-pg"), {**services, "MCP_TEST_PG_NAME": name})
    try:
        migrate(env)
        fill(env, 100)
        with two_workers(env, keepalive="2", prefix="catalogue") as pair:
            yield pair
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


async def test_an_admin_save_on_one_worker_reaches_subscribers_on_another(workers: Workers, mode: str) -> None:
    await watch_admin_saves(workers.a, workers.b, mode, workers.env)
