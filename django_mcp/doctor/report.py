"""The doctor's findings for people (a line per check, then what a client sees and the fix) and as JSON."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .findings import FAIL, OK, SKIP, WARN, Finding


LABELS = {OK: "ok", WARN: "WARN", FAIL: "FAIL", SKIP: "skip"}


def failed(findings: Sequence[Finding]) -> bool:
    return any(finding.status == FAIL for finding in findings)


def summary(findings: Sequence[Finding]) -> str:
    counts = Counter(finding.status for finding in findings)
    parts = [f"{counts[OK]} ok", f"{counts[WARN]} warning(s)", f"{counts[FAIL]} failed", f"{counts[SKIP]} not checked"]
    return ", ".join(parts)


def as_text(url: str, findings: Sequence[Finding]) -> str:
    """A line per check; under a warning or failure, what a client sees and the fix."""
    width = max((len(finding.check) for finding in findings), default=0)
    lines = [f"Checking {url} as MCP clients connect to it", ""]
    for finding in findings:
        fault = f"  [{finding.fault}]" if finding.fault and finding.status in (WARN, FAIL) else ""
        lines.append(f"{LABELS[finding.status]:<4}  {finding.check:<{width}}  {finding.title}{fault}")
        indent = " " * (width + 8)
        if finding.status in (WARN, FAIL):
            lines.append(f"{indent}client sees: {finding.seen}")
            lines.append(f"{indent}fix: {finding.fix}")
        elif finding.seen:
            lines.append(f"{indent}{finding.seen}")
    lines += ["", summary(findings)]
    return "\n".join(lines)


def as_json(url: str, findings: Sequence[Finding]) -> str:
    data: dict[str, Any] = {"url": url, "ok": not failed(findings),
                            "summary": dict(Counter(finding.status for finding in findings)),
                            "findings": [finding.as_dict() for finding in findings]}
    return json.dumps(data, indent=2, ensure_ascii=False)
