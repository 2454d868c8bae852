"""
Hypothesis profiles of the fuzz tests, chosen by ``MCP_FUZZ_PROFILE``:

- ``suite`` (the default, inside the normal test run): seeded and derandomized, so every run
  tries the same few hundred cases per test and a failure is reproducible; no example database.
- ``long`` (``scripts/fuzz``): random, ``MCP_FUZZ_CASES`` cases in all (default 100,000) shared
  out by :data:`SHARES`; failures are kept in ``.tmp/hypothesis/examples`` (ignored by git) and
  replayed first on the next long run.

Hypothesis's own files (its caches) go to ``.tmp/hypothesis`` too, not to ``.hypothesis`` in the
repository.
"""

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / ".tmp" / "hypothesis"
set_hypothesis_home_dir(HOME)
PROFILE = os.environ.get("MCP_FUZZ_PROFILE", "suite")
DEFAULT_LONG_CASES = 100_000

# Cases per test in the suite: under a minute in all on two busy cores (about 45 s measured).
SUITE_CASES = {
    "dispatcher_legacy": 300,
    "dispatcher_modern": 400,
    "http_legacy": 150,
    "http_modern": 200,
    "http_raw": 200,
    "http_sse": 80,
    "live": 30,
    "tokens": 400,
}
# Shares of a long run: the fast in-process tests get most cases, the real sockets a few.
SHARES = {
    "dispatcher_legacy": 0.25,
    "dispatcher_modern": 0.25,
    "http_legacy": 0.10,
    "http_modern": 0.20,
    "http_raw": 0.10,
    "http_sse": 0.04,
    "live": 0.01,
    "tokens": 0.05,
}

_COMMON = {
    "deadline": None,
    # The strategies build big values on purpose, and the tests use function-scoped fixtures
    # (the database) that hold for every example.
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                              HealthCheck.function_scoped_fixture, HealthCheck.large_base_example],
    "print_blob": True,
}
settings.register_profile("suite", derandomize=True, database=None, **_COMMON)
settings.register_profile("long", derandomize=False,
                          database=DirectoryBasedExampleDatabase(str(HOME / "examples")), **_COMMON)
if PROFILE not in ("suite", "long"):
    raise RuntimeError(f"MCP_FUZZ_PROFILE must be 'suite' or 'long', not {PROFILE!r}")


def cases(test: str) -> int:
    """How many cases ``test`` runs under the current profile."""
    if PROFILE == "long":
        total = int(os.environ.get("MCP_FUZZ_CASES") or DEFAULT_LONG_CASES)
        return max(1, round(total * SHARES[test]))
    return SUITE_CASES[test]


def fuzz_settings(test: str) -> settings:
    """The settings decorator of one fuzz test."""
    return settings(parent=settings.get_profile(PROFILE), max_examples=cases(test))
