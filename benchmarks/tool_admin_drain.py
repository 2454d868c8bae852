"""
``loadgen.py``'s stdlib generator with an exact count of the calls a server answered, for
``tool_admin.py``'s call-log check (run as ``python -m benchmarks.tool_admin_drain JOB.json``).

At its deadline the generator in ``loadgen.py`` (like wrk) stops counting: each connection still
has one request in flight, which the server runs, logs and answers, but which the timed window does
not count. Here those late answers are still read and counted on their own, and the connection is
closed only after its answer is in, so ``good + late_good`` is every successful call the server
answered: exactly the number of entries its call log must hold.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadgen


class DrainRun(loadgen._Run):
    """``loadgen._Run``, which already reads each connection's last answer, now counting it too."""

    def __init__(self, job: dict) -> None:
        super().__init__(job)
        self.late_good = self.late_bad = 0

    def completed(self, conn, ok: bool) -> None:
        counted = self.good + self.bad
        super().completed(conn, ok)
        # The parent decides "past the deadline" with its own clock reading; asking it afterwards
        # whether it counted this answer avoids a second reading that could disagree.
        if self.good + self.bad == counted:
            if ok:
                self.late_good += 1
            else:
                self.late_bad += 1

    async def main(self) -> dict:
        result = await super().main()
        return {**result, "late_good": self.late_good, "late_bad": self.late_bad}


def run(command_prefix: list[str], spec, port: int, conns: int, duration: float) -> tuple[loadgen.Result, int, int]:
    """Run ``DrainRun`` in a child process; return (the timed window's Result, late good, late bad answers)."""
    job = {"port": port, "request": spec.raw(port).decode("latin-1"), "expect": spec.expect,
           "conns": conns, "duration": duration, "numbered": spec.numbered}
    command = [*command_prefix, sys.executable, "-m", "benchmarks.tool_admin_drain", json.dumps(job)]
    out = subprocess.run(command, check=False, capture_output=True, text=True, timeout=duration + 60,
                         cwd=loadgen.ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"drain load generator failed: {out.stderr[-2000:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    late_good, late_bad = data.pop("late_good"), data.pop("late_bad")
    return loadgen.Result(**data), late_good, late_bad


if __name__ == "__main__":
    print(json.dumps(asyncio.run(DrainRun(json.loads(sys.argv[1])).main())))
