"""Opaque pagination cursors (digest §4.6): clients must not parse them; we encode an offset."""

import base64
import json
from collections.abc import Sequence
from typing import Any, TypeVar

from .errors import InvalidParams


T = TypeVar("T")


def encode_cursor(offset: int) -> str:
    """An opaque cursor for the page that starts at ``offset``."""
    raw = json.dumps({"o": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int:
    """The offset a cursor stands for; a cursor we did not mint is ``-32602`` (digest §4.6)."""
    if cursor is None or cursor == "":
        return 0
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        offset = json.loads(base64.urlsafe_b64decode(padded.encode()))["o"]
    except (ValueError, KeyError, TypeError):
        raise InvalidParams("Invalid cursor", {"cursor": cursor}) from None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidParams("Invalid cursor", {"cursor": cursor})
    return offset


def paginate(items: Sequence[T], cursor: str | None, page_size: int) -> tuple[list[T], str | None]:
    """One page of ``items`` and the cursor of the next page, if there is one."""
    start = decode_cursor(cursor)
    end = start + page_size
    page = list(items[start:end])
    return page, (encode_cursor(end) if end < len(items) else None)


def page_fields(next_cursor: str | None) -> dict[str, Any]:
    """The ``nextCursor`` member, present only when more results exist."""
    return {"nextCursor": next_cursor} if next_cursor is not None else {}
