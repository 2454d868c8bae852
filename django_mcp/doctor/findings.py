"""
What a check of ``mcp_doctor`` reports: a :class:`Finding` per step, with its status, what a client
would see at that step, and the fix when something is wrong.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


OK = "ok"
WARN = "warn"
FAIL = "fail"
#: A step the doctor could not or was told not to take (no ``--token``, ``--no-register``, …).
SKIP = "skip"
STATUSES = (OK, WARN, FAIL, SKIP)


@dataclass
class Finding:
    """
    One step of the doctor's walk: ``check`` is its stable name (``prm-path``, ``sse-buffering``…),
    ``fault`` a short name of what is wrong (``metadata path missing``, ``buffering``…; empty when
    nothing is), ``seen`` what a client meets there, ``fix`` what to change.
    """

    check: str
    status: str
    title: str
    seen: str = ""
    fix: str = ""
    fault: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ok(check: str, title: str, seen: str = "", **details: Any) -> Finding:
    return Finding(check, OK, title, seen, details=details)


def warn(check: str, title: str, seen: str, fix: str, *, fault: str = "", **details: Any) -> Finding:
    return Finding(check, WARN, title, seen, fix, fault, details)


def fail(check: str, title: str, seen: str, fix: str, *, fault: str = "", **details: Any) -> Finding:
    return Finding(check, FAIL, title, seen, fix, fault, details)


def skip(check: str, title: str, seen: str, **details: Any) -> Finding:
    return Finding(check, SKIP, title, seen, details=details)
