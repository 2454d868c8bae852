"""Signed, opaque pagination cursors: anything we did not mint is -32602."""

import pytest

from django_mcp.cursors import decode_cursor, encode_cursor
from django_mcp.protocol.errors import INVALID_PARAMS, InvalidParams


@pytest.mark.parametrize("payload", [0, 7, ["tool", 0, 100], {"pk": 3}, None])
def test_round_trip(payload):
    cursor = encode_cursor(payload)
    assert isinstance(cursor, str)
    assert decode_cursor(cursor) == payload


@pytest.mark.parametrize("cursor", ["", "x", "eyJvIjowfQ", "not base64 !!", "a" * 5000, "\u00e9\u0000"])
def test_foreign_cursor_is_invalid_params(cursor):
    with pytest.raises(InvalidParams) as info:
        decode_cursor(cursor)
    assert info.value.code == INVALID_PARAMS
    assert info.value.data == {"cursor": cursor}


def test_tampered_cursor_is_refused():
    cursor = encode_cursor(["tool", 0, 100])
    payload, _, signature = cursor.rpartition(":")
    forged = encode_cursor(["tool", 0, 5000]).rpartition(":")[0] + ":" + signature
    with pytest.raises(InvalidParams):
        decode_cursor(forged)
    with pytest.raises(InvalidParams):
        decode_cursor(cursor[:-1] + ("A" if cursor[-1] != "A" else "B"))


def test_cursor_from_another_secret_key_is_refused(settings):
    cursor = encode_cursor(["tool", 0, 1])
    settings.SECRET_KEY = "another-secret"
    with pytest.raises(InvalidParams):
        decode_cursor(cursor)
