"""
The count of faults injected in a run: each test records every fault at the moment it injects
it, and ``tests/faults/conftest.py`` prints the totals in pytest's terminal summary (and writes
them as JSON where ``MCP_FAULTS_SUMMARY`` names a file, for ``scripts/faults``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path


class FaultLedger:
    """Faults injected so far, by kind (``drop``, ``kill``, ``postgres-outage``…)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        # Background failures seen in the workers' logs (asyncio tasks that died unobserved).
        self.notes: Counter[str] = Counter()

    def note(self, finding: str) -> None:
        """Record something a worker logged that no test asserts on (it may be racy)."""
        self.notes[finding] += 1

    def inject(self, kind: str, count: int = 1) -> None:
        """Record ``count`` faults of ``kind``; call it when the fault is injected, not planned."""
        self.counts[kind] += count

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.counts.items()))
        return f"faults injected: {self.total}" + (f" ({kinds})" if kinds else "")

    def write(self, path: Path, **extra: object) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"faults": self.total, "by_kind": dict(self.counts), "notes": dict(self.notes),
                                    **extra}, indent=2) + "\n")


LEDGER = FaultLedger()
