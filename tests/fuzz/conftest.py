"""
The fuzz tests' Hypothesis profile (``tests/fuzz/profiles.py``) and, at the end of a run, how
many cases each test ran and how long the run took.
"""

import time

import pytest

from . import profiles  # noqa: F401  (registers the profiles before any test module is imported)
from .counting import COUNTS, STARTED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not COUNTS:
        return
    elapsed = time.monotonic() - STARTED
    terminalreporter.section(f"fuzz ({profiles.PROFILE} profile)")
    for test, number in sorted(COUNTS.items()):
        terminalreporter.write_line(f"{test:>20}: {number} cases")
    terminalreporter.write_line(f"fuzz: {sum(COUNTS.values())} cases in {elapsed:.1f} s")
