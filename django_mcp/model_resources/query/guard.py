"""
The database side of a query's safety: it runs read-only, under a statement timeout, and is
rolled back whatever happens.

- PostgreSQL: a transaction (a savepoint inside one) with ``transaction_read_only`` and
  ``statement_timeout`` set locally (``set_config(…, true)``), rolled back at the end, which also
  undoes both settings; optionally refused first when ``EXPLAIN`` estimates it above a cost.
- SQLite: ``PRAGMA query_only`` and a progress handler that interrupts a statement running past
  its deadline, both undone afterwards; no transaction (a ``BEGIN IMMEDIATE`` would lock writers out).
- MySQL and MariaDB: ``SET SESSION TRANSACTION READ ONLY`` before the transaction, and
  ``max_execution_time`` (MySQL, milliseconds) or ``max_statement_time`` (MariaDB, seconds),
  restored afterwards. Inside a transaction already open only the savepoint's rollback and the
  timeout hold: a transaction's access mode is fixed when it begins.

The SQL itself is a ``SELECT`` the ORM compiled from a checked plan, so these guards are the
second line: they hold even if a resource's ``get_queryset`` or a database function misbehaves.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError, connections, transaction

from .errors import QueryError

logger = logging.getLogger("django_mcp.tools")


@contextmanager
def guarded(using: str, timeout_ms: int) -> Iterator[None]:
    """Run the block read-only, stopping any statement after ``timeout_ms``; roll back at the end."""
    connection = connections[using]
    vendor = connection.vendor
    if vendor == "postgresql":
        with transaction.atomic(using=using):
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('transaction_read_only', 'on', true), "
                               "set_config('statement_timeout', %s, true)", [str(int(timeout_ms))])
            try:
                yield
            finally:
                transaction.set_rollback(True, using=using)
        return
    if vendor == "sqlite":
        # No transaction of its own: with transaction_mode "IMMEDIATE" its BEGIN would take the
        # write lock (refused under query_only, and blocking every writer while the query runs).
        with _sqlite_guard(connection, timeout_ms):
            yield
        return
    if vendor == "mysql":
        with _mysql_guard(connection, timeout_ms), transaction.atomic(using=using):
            try:
                yield
            finally:
                transaction.set_rollback(True, using=using)
        return
    # Another database: read-only by construction (a compiled SELECT) and rolled back, no timeout.
    with transaction.atomic(using=using):
        try:
            yield
        finally:
            transaction.set_rollback(True, using=using)


@contextmanager
def _sqlite_guard(connection: Any, timeout_ms: int) -> Iterator[None]:
    connection.ensure_connection()
    raw = connection.connection
    deadline = time.monotonic() + timeout_ms / 1000

    def past_deadline() -> int:
        return 1 if time.monotonic() > deadline else 0

    # Asked every thousand virtual-machine steps: a non-zero answer interrupts the statement.
    raw.set_progress_handler(past_deadline, 1000)
    raw.execute("PRAGMA query_only = ON")
    try:
        yield
    finally:
        raw.execute("PRAGMA query_only = OFF")
        raw.set_progress_handler(None, 0)


@contextmanager
def _mysql_guard(connection: Any, timeout_ms: int) -> Iterator[None]:
    mariadb = connection.mysql_is_mariadb
    variable = "max_statement_time" if mariadb else "max_execution_time"
    limit = timeout_ms / 1000 if mariadb else int(timeout_ms)
    outermost = not connection.in_atomic_block
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT @@session.{variable}")
        previous = cursor.fetchone()[0]
        cursor.execute(f"SET SESSION {variable} = %s", [limit])
        if outermost:  # applies to the next transaction: the one the guard opens
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            if outermost:
                cursor.execute("SET SESSION TRANSACTION READ WRITE")
            cursor.execute(f"SET SESSION {variable} = %s", [previous])


def estimated_cost(queryset: Any) -> float | None:
    """PostgreSQL's estimate of the total cost of running ``queryset`` (``EXPLAIN``), None elsewhere."""
    if connections[queryset.db].vendor != "postgresql":
        return None
    plan = queryset.explain(format="json")
    document = json.loads(plan) if isinstance(plan, str) else plan
    return float(document[0]["Plan"]["Total Cost"])


def timed_out(error: DatabaseError, using: str) -> bool:
    """Whether the database stopped a statement because the guard's timeout passed."""
    vendor = connections[using].vendor
    cause = error.__cause__
    if vendor == "postgresql":
        return getattr(cause, "sqlstate", None) == "57014"  # query_canceled
    if vendor == "sqlite":
        return "interrupted" in str(error)
    if vendor == "mysql":
        code = (getattr(cause, "args", None) or error.args or (None,))[0]
        return code in (1969, 3024)  # MariaDB max_statement_time, MySQL max_execution_time
    return False


def refusal(error: DatabaseError, using: str, timeout_ms: int, model_name: str) -> QueryError:
    """The tool error for a database error: a timeout, or a query the database could not run."""
    if timed_out(error, using):
        return QueryError(f"The query ran longer than {timeout_ms} ms and was stopped. Narrow it: filter on "
                          "indexed fields, group by fewer columns, or query fewer relations.")
    # The database's text can hold values and SQL: logged, not sent.
    logger.info("A query on %s failed in the database: %r", model_name, error)
    return QueryError(f"The database could not run this query on {model_name} ({type(error).__name__}); "
                      "check that each value suits its field.")
