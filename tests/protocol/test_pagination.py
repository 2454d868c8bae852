"""Opaque cursors and paging (digest §4.6)."""

import base64

import pytest

from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.pagination import decode_cursor, encode_cursor, page_fields, paginate


@pytest.mark.parametrize("offset", [0, 1, 7, 100, 123456])
def test_cursor_round_trip(offset):
    cursor = encode_cursor(offset)
    assert isinstance(cursor, str)
    assert "=" not in cursor  # padding stripped
    assert decode_cursor(cursor) == offset


def test_missing_and_empty_cursor_mean_the_start():
    assert decode_cursor(None) == 0
    assert decode_cursor("") == 0


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "!!!",
        "abc",
        _b64(b"not json"),
        _b64(b'{"x": 1}'),
        _b64(b'{"o": -1}'),
        _b64(b'{"o": "3"}'),
        _b64(b'{"o": true}'),
        _b64(b'{"o": 1.5}'),
        _b64(b"[1]"),
    ],
)
def test_foreign_cursor_is_invalid_params(cursor):
    with pytest.raises(InvalidParams) as info:
        decode_cursor(cursor)
    assert info.value.code == -32602
    assert info.value.data == {"cursor": cursor}


def test_paginate_walks_all_pages():
    items = list(range(7))
    seen = []
    cursor = None
    pages = 0
    while True:
        page, cursor = paginate(items, cursor, 3)
        seen.extend(page)
        pages += 1
        if cursor is None:
            break
    assert seen == items
    assert pages == 3


def test_paginate_exact_multiple_has_no_trailing_cursor():
    page, cursor = paginate([1, 2, 3, 4], None, 2)
    assert page == [1, 2]
    page, cursor = paginate([1, 2, 3, 4], cursor, 2)
    assert page == [3, 4]
    assert cursor is None


def test_paginate_single_page_and_empty():
    assert paginate(["a"], None, 10) == (["a"], None)
    assert paginate([], None, 10) == ([], None)


def test_paginate_past_the_end_is_empty():
    assert paginate([1, 2], encode_cursor(10), 5) == ([], None)


def test_page_fields():
    assert page_fields(None) == {}
    assert page_fields("abc") == {"nextCursor": "abc"}
