"""
The ``nextCursor`` member of list results (MCP spec 2025-11-25, server/utilities/pagination).
Cursors are minted and checked by the backend, which knows what its positions mean.
"""

from typing import Any


def page_fields(next_cursor: str | None) -> dict[str, Any]:
    """The ``nextCursor`` member, present only when more results exist."""
    return {"nextCursor": next_cursor} if next_cursor is not None else {}
