"""
Fixtures and hooks of the fault-injection suite (docs/faults.md).

- ``faults``: the run's :class:`~tests.faults.ledger.FaultLedger`; tests record each fault they
  inject, and the terminal summary prints the totals (also written as JSON to the file named by
  ``MCP_FAULTS_SUMMARY``, which ``scripts/faults`` reads).
- ``fault_services``: the environment of the faults' workers — the ``services`` fixture's fresh
  PostgreSQL database and Redis prefix (so the suite skips, or fails under CI=true, exactly as the
  other multi-worker tests do when the services are absent) with ``tests/faults/settings.py``.
- A hard time limit per test (pytest-timeout is not installed): ``SIGALRM`` interrupts the test,
  even one blocked in a socket read, after ``@pytest.mark.fault_timeout(seconds)`` (default
  :data:`DEFAULT_LIMIT`), so a hang fails the test instead of blocking the suite.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

import pytest

from tests.faults.harness import fault_env
from tests.faults.ledger import LEDGER, FaultLedger

DEFAULT_LIMIT = 60.0
_started = time.monotonic()


class TestHung(AssertionError):
    """A fault test ran past its hard time limit (something it waited for never came)."""

    __test__ = False  # not a test class, whatever its name


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fault_timeout(seconds): hard time limit of a fault-injection test")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if not hasattr(signal, "SIGALRM"):
        yield
        return
    marker = item.get_closest_marker("fault_timeout")
    limit = float(marker.args[0]) if marker else DEFAULT_LIMIT

    def hung(signum: int, frame: object) -> None:
        raise TestHung(f"{item.nodeid} ran past its hard limit of {limit:g} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session")
def faults() -> FaultLedger:
    """Where tests record the faults they inject."""
    return LEDGER


@pytest.fixture(scope="session")
def fault_services(services: Mapping[str, str]) -> Mapping[str, str]:
    """The faults' workers' environment on the session's PostgreSQL database and Redis prefix."""
    return MappingProxyType(fault_env(services))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not LEDGER.total and not any(str(arg).rstrip("/").endswith("faults") for arg in terminalreporter.config.args):
        return  # a run that did not include the fault suite has nothing to report
    elapsed = time.monotonic() - _started
    terminalreporter.write_sep("-", "fault injection")
    terminalreporter.write_line(f"{LEDGER.summary()} in {elapsed:.1f} s")
    for finding, count in LEDGER.notes.most_common():
        terminalreporter.write_line(f"worker log: {count} x {finding}")
    target = os.environ.get("MCP_FAULTS_SUMMARY")
    if target:
        stats = terminalreporter.stats
        LEDGER.write(Path(target), seconds=round(elapsed, 1),
                     **{outcome: len(stats.get(outcome, [])) for outcome in
                        ("passed", "failed", "xfailed", "xpassed", "skipped", "error")})
