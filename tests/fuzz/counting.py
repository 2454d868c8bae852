"""Cases each fuzz test really ran (Hypothesis may run more than ``max_examples`` while shrinking)."""

import time
from collections import Counter

COUNTS: Counter[str] = Counter()
STARTED = time.monotonic()


def count(test: str) -> int:
    """Record one case of ``test``; its number."""
    COUNTS[test] += 1
    return COUNTS[test]
