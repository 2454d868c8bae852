"""
A fresh PostgreSQL database for ``run.py --postgres``, created, migrated and dropped around the run.

The same recipe as the test suite's ``services`` fixture (tests/conftest.py): PostgreSQL on
127.0.0.1:5432, user ``postgres`` with trust authentication, a database with a random name so two
runs never share one, ``tests.live.migrate`` on it, ``DROP DATABASE ... WITH (FORCE)`` at the end
(FORCE because a server that failed to stop may still hold a connection). Only the database
changes: the channel layer stays the in-memory one, as in the SQLite runs, so the comparison
isolates the database.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

from tests.live import migrate

ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"


@contextlib.contextmanager
def fresh_database(log=print) -> Iterator[dict[str, str] | None]:
    """
    Yield the server environment for a new, migrated database, or None (with the reason logged)
    when psycopg is missing or PostgreSQL does not answer. The database is dropped on exit.
    """
    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        log("  ! --postgres: psycopg is not installed; PostgreSQL rows skipped")
        yield None
        return
    name = f"django_mcp_bench_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        log(f"  ! --postgres: cannot create a database on 127.0.0.1:5432 ({exc}); PostgreSQL rows skipped")
        yield None
        return
    env = {"MCP_TEST_DATABASE": "postgres", "MCP_TEST_PG_NAME": name}
    try:
        log(f"  migrating a fresh PostgreSQL database: {name} on 127.0.0.1:5432")
        migrate(env)
        yield env
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        log(f"  dropped PostgreSQL database {name}")
