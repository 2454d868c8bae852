"""
Counting the SQL statements a server sends, from PostgreSQL's own log, for ``model_resources.py``.

Nothing in the server is instrumented (with ``DEBUG = False`` Django records no queries anyway, and
``pg_stat_statements`` needs ``shared_preload_libraries``, i.e. a restart of the cluster). Instead:

- ``ALTER DATABASE <bench db> SET log_statement = 'all'``: every statement of every *new*
  connection to the benchmark database, and of no other database, is logged when it starts, before
  its answer, so by the time an HTTP response has arrived its statements are in the log;
- the log is read through SQL as superuser (``pg_read_binary_file``), from the byte offset reached
  by the previous read: the file ``pg_current_logfile()`` names when the logging collector runs,
  else the server's stderr, which every backend inherits (``/proc/self/fd/2`` of the backend that
  reads it; on Debian it is ``/var/log/postgresql/postgresql-15-main.log``);
- a record counts when its message is ``statement: ...`` (simple protocol, what Django's psycopg
  backend sends with client-side binding) or ``execute <name>: ...`` (extended protocol) and its
  prefix names the benchmark database (``%d`` in ``log_line_prefix``; without it every database's
  statements would count, and ``StatementLog.note`` says so).

The orchestrator's own sessions on the benchmark database run ``SET log_statement = 'none'`` first,
so only the server's statements are in the log. Logging costs the server a ``write()`` per
statement, which ``replay()`` does not pay.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

# Enough for any window here (a 100,000-row listing logs ~200 KB); a bigger read loops.
READ_CHUNK = 16 * 1024 * 1024
_MESSAGE = re.compile(r"^(?P<prefix>.*?)LOG:  (?:statement|execute [^:]*): (?P<sql>.*)$", re.DOTALL)
_PID = re.compile(r"\[(\d+)\]")


class Unavailable(RuntimeError):
    """The log cannot be read through SQL here (no superuser, log sent to syslog or a pipe, ...)."""


@dataclass
class Statement:
    pid: int | None
    sql: str


class StatementLog:
    """The benchmark database's statements, read window by window from PostgreSQL's log."""

    def __init__(self, admin, database: str) -> None:
        """``admin``: an autocommit psycopg connection as superuser; ``database``: the one to count."""
        self.admin = admin
        self.database = database
        collector, current, prefix = admin.execute(
            "SELECT current_setting('logging_collector'), pg_current_logfile('stderr'), "
            "current_setting('log_line_prefix')").fetchone()
        # With the collector on, stderr is a pipe to it: read the file it writes instead.
        self.path = current if collector == "on" and current else "/proc/self/fd/2"
        self.by_database = "%d" in prefix
        self.note = "" if self.by_database else (
            "log_line_prefix has no %d: statements of every database with log_statement on are counted")
        try:
            size, is_dir = admin.execute("SELECT size, isdir FROM pg_stat_file(%s)", (self.path,)).fetchone()
        except Exception as exc:  # psycopg.Error, but keep this module importable without psycopg
            raise Unavailable(f"cannot stat the PostgreSQL log {self.path!r} through SQL: {exc}") from exc
        if is_dir or size is None:
            raise Unavailable(f"the PostgreSQL log {self.path!r} is not a regular file")
        self.offset = size
        self.partial = b""

    def describe(self) -> str:
        where = self.path
        if self.path == "/proc/self/fd/2":
            where = f"the server's stderr ({self._stderr_target() or 'through /proc/self/fd/2'})"
        return where

    def _stderr_target(self) -> str | None:
        """Where the postmaster's stderr goes, when this process may look (same host, root)."""
        try:
            pid = self.admin.execute("SELECT pg_backend_pid()").fetchone()[0]
            return os.readlink(f"/proc/{pid}/fd/2")
        except OSError:
            return None

    def enable(self) -> None:
        """Log every statement of the benchmark database's new connections (start servers after this)."""
        from psycopg import sql

        self.admin.execute(sql.SQL("ALTER DATABASE {} SET log_statement = 'all'").format(
            sql.Identifier(self.database)))

    def take(self) -> list[Statement]:
        """The statements logged since the previous call (complete lines only)."""
        data = self.partial
        while True:
            chunk = self.admin.execute("SELECT pg_read_binary_file(%s, %s, %s, true)",
                                       (self.path, self.offset, READ_CHUNK)).fetchone()[0] or b""
            self.offset += len(chunk)
            data += bytes(chunk)
            if len(chunk) < READ_CHUNK:
                break
        # Another database's backend may be halfway through a line: keep that for the next read.
        end = data.rfind(b"\n") + 1
        data, self.partial = data[:end], data[end:]
        return self._parse(data.decode("utf-8", "replace"))

    def _parse(self, text: str) -> list[Statement]:
        statements = []
        for record in _records(text):
            match = _MESSAGE.match(record)
            if match is None:
                continue
            if self.by_database and f"@{self.database} " not in match["prefix"] \
                    and not match["prefix"].rstrip().endswith(f"@{self.database}"):
                continue
            pid = _PID.search(match["prefix"])
            statements.append(Statement(int(pid[1]) if pid else None, match["sql"].strip()))
        return statements


def _records(text: str) -> list[str]:
    """Log records: a line, plus the tab-indented lines that continue a multi-line statement."""
    records: list[str] = []
    for line in text.split("\n"):
        if line.startswith("\t") and records:
            records[-1] += "\n" + line[1:]
        elif line:
            records.append(line)
    return records


# --- reading the statements -------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w$])-?\d+(?:\.\d+)?\b")
_STRING = re.compile(r"'(?:[^']|'')*'")
_COLUMNS = re.compile(r"^SELECT (?:DISTINCT )?.*? FROM ", re.DOTALL)


def shape(sql: str) -> str:
    """A statement with its literals and column list taken out, to count statements of one kind."""
    text = _STRING.sub("'…'", sql)
    text = _NUMBER.sub("N", text)
    text = re.sub(r"IN \((?:N|'…')(?:, (?:N|'…'))*\)", "IN (…)", text)  # a prefetch's IN list varies in length
    text = _COLUMNS.sub("SELECT … FROM ", text, count=1)
    return re.sub(r"\s+", " ", text)


def parameterised(sql: str) -> bool:
    """An ``execute`` of the extended protocol: its values are in a DETAIL line, not in the text."""
    return re.search(r"\$\d+", _STRING.sub("", sql)) is not None


def replay(conn, statements: list[str]) -> float | None:
    """
    Seconds to run ``statements`` again, in order, through psycopg on ``conn`` (all rows fetched):
    the database's share of a request, without the server. None when some carry bound parameters.
    """
    if any(parameterised(sql) for sql in statements):
        return None
    started = time.perf_counter()
    with conn.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)
            if cursor.description is not None:
                cursor.fetchall()
    return time.perf_counter() - started


def explain(conn, sql: str) -> str:
    """
    What PostgreSQL does for ``sql``, in one line: the plan's nodes top-down with their actual rows
    (an index or a scan of the whole table shows here), and the execution time.
    """
    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql).fetchone()[0][0]
    nodes = []
    stack = [plan["Plan"]]
    while stack:
        node = stack.pop(0)
        text = node["Node Type"]
        if node.get("Index Name"):
            text += f" using {node['Index Name']}"
        elif node.get("Relation Name"):
            text += f" on {node['Relation Name']}"
        text += f" ({node.get('Actual Rows', 0):,} rows"
        removed = node.get("Rows Removed by Filter") or node.get("Rows Removed by Index Recheck")
        text += f", {removed:,} filtered out)" if removed else ")"
        nodes.append(text)
        stack[:0] = node.get("Plans", [])
    buffers = plan["Plan"].get("Shared Hit Blocks", 0) + plan["Plan"].get("Shared Read Blocks", 0)
    return f"{' > '.join(nodes)}; {buffers:,} buffers, {plan['Execution Time']:.3f} ms"
