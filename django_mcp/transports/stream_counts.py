"""
How many long-lived streams this worker holds, by kind, for operators (the metrics app reads it
when scraped): ``session`` (legacy GET streams), ``listen`` (2026-07-28 ``subscriptions/listen``)
and ``sse`` (2024-11-05 HTTP+SSE streams). Each transport module names where its count lives;
reading the counts costs the streams nothing.
"""

from collections.abc import Callable


_sources: dict[str, Callable[[], int]] = {}


def count_streams(kind: str, source: Callable[[], int]) -> None:
    """Make ``source()`` the number of open streams of ``kind`` on this worker."""
    _sources[kind] = source


def open_stream_counts() -> dict[str, int]:
    """Open streams on this worker, by kind."""
    return {kind: source() for kind, source in _sources.items()}
