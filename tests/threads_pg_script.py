"""
Run by tests/test_threads.py in a child process on the services' PostgreSQL database (kept
connections: ``CONN_MAX_AGE`` 60, ``CONN_HEALTH_CHECKS`` on, as tests.settings sets them): what an
idempotent query of django_mcp's own does with a kept connection that is fine, and with one that
PostgreSQL has dropped since. Prints one JSON object for the test to check.
"""

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

import django

django.setup()

import psycopg  # noqa: E402
from django.db import DatabaseError, connections  # noqa: E402

from django_mcp import threads  # noqa: E402
from django_mcp.models import McpSession  # noqa: E402


def main() -> dict:
    # Each function asks for the connection of the thread it runs on (connections are per thread).
    connection_class = type(connections["default"])
    runs: list[str] = []
    health_checks = 0

    original_is_usable = connection_class.is_usable

    def counting_is_usable(self):  # what CONN_HEALTH_CHECKS runs before a request's first query
        nonlocal health_checks
        health_checks += 1
        return original_is_usable(self)

    connection_class.is_usable = counting_is_usable

    def backend_pid() -> int:
        runs.append("read")
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    def failing_statement() -> None:
        runs.append("failing")
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_sleep(1)")  # ended by the statement_timeout below

    def terminate(pid: int) -> None:
        settings = connections["default"].settings_dict
        with psycopg.connect(host=settings["HOST"], port=settings["PORT"], user=settings["USER"],
                             dbname=settings["NAME"], autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            # It only signals the backend: wait until it has gone, so the next read finds it gone.
            deadline = time.monotonic() + 10
            while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                assert time.monotonic() < deadline, "the backend was not terminated"
                time.sleep(0.05)

    read = threads.in_database_thread(backend_pid, McpSession, idempotent=True)
    checked = threads.in_database_thread(backend_pid, McpSession)
    failing = threads.in_database_thread(failing_statement, McpSession, idempotent=True)

    async def scenario() -> dict:
        nonlocal health_checks
        result: dict = {}
        # One pool thread, so each call finds the connection the one before kept.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
        first = await read()
        health_checks = 0
        second = await read()
        result["kept_and_unchecked"] = {"same_backend": first == second, "health_checks": health_checks}

        terminate(second)
        runs.clear()
        health_checks = 0
        third = await read()
        result["dropped"] = {"answered_by_new_backend": third != second, "runs": list(runs),
                             "health_checks": health_checks}

        health_checks = 0
        fourth = await checked()
        result["not_idempotent_still_checked"] = {"same_backend": fourth == third, "health_checks": health_checks}

        def set_timeout() -> None:
            with connections["default"].cursor() as cursor:
                cursor.execute("SET statement_timeout = 50")
        await threads.in_database_thread(set_timeout, McpSession)()
        runs.clear()
        try:
            await failing()
            result["statement_error"] = "no error"
        except DatabaseError as exc:
            result["statement_error"] = {"error": type(exc).__name__, "runs": list(runs)}
        return result

    return asyncio.run(scenario())


print(json.dumps(main()))
