"""Signed ``requestState`` for multi-round-trip requests (MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322; MCP security best practices)."""

import pytest
from django.core import signing

from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.versions import Era
from django_mcp.request_state import SALT, SignedStateCodec


class StubUser:
    is_authenticated = True

    def __init__(self, pk: int) -> None:
        self.pk = pk


def ctx(user=None) -> RequestContext:
    return RequestContext(era=Era.MODERN, protocol_version="2026-07-28", user=user)


PAYLOAD = {"a": {"k": {"action": "accept", "content": {"name": "Ada"}}}, "p": ["k2"], "d": "abc123"}


def test_round_trip_anonymous_and_user():
    codec = SignedStateCodec()
    token = codec.encode(PAYLOAD, ctx())
    assert isinstance(token, str)
    assert codec.decode(token, ctx()) == {**PAYLOAD, "u": "anonymous"}
    token = codec.encode(PAYLOAD, ctx(StubUser(7)))
    assert codec.decode(token, ctx(StubUser(7)))["u"] == "user:7"


def test_token_is_opaque_to_casual_reading():
    token = SignedStateCodec().encode({"secret": "x" * 50}, ctx())
    assert "secret" not in token  # compressed and base64-encoded


@pytest.mark.parametrize(("encoder", "decoder"), [(None, StubUser(1)), (StubUser(1), None), (StubUser(1), StubUser(2))])
def test_another_user_is_refused(encoder, decoder):
    codec = SignedStateCodec()
    token = codec.encode(PAYLOAD, ctx(encoder))
    with pytest.raises(InvalidParams) as info:
        codec.decode(token, ctx(decoder))
    assert info.value.code == -32602
    assert "another user" in info.value.message


def test_tampering_is_refused():
    codec = SignedStateCodec()
    token = codec.encode(PAYLOAD, ctx())
    for bad in (token[:-1] + ("A" if token[-1] != "A" else "B"), token[1:], "x" + token, "", "not-a-token"):
        with pytest.raises(InvalidParams, match="failed verification"):
            codec.decode(bad, ctx())


def test_a_token_signed_for_another_purpose_is_refused():
    token = signing.dumps({**PAYLOAD, "u": "anonymous"}, salt="some.other.salt", compress=True)
    with pytest.raises(InvalidParams):
        SignedStateCodec().decode(token, ctx())
    assert SALT == "django_mcp.request_state"


def test_a_token_with_another_secret_key_is_refused(settings):
    token = SignedStateCodec().encode(PAYLOAD, ctx())
    settings.SECRET_KEY = "another-secret"
    with pytest.raises(InvalidParams):
        SignedStateCodec().decode(token, ctx())


def test_signed_non_dict_payload_is_refused():
    token = signing.dumps(["a", "list"], salt=SALT)
    with pytest.raises(InvalidParams):
        SignedStateCodec().decode(token, ctx())


def test_expiry(settings, monkeypatch):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_STATE_MAX_AGE_SECONDS": 5}
    codec = SignedStateCodec()
    fresh = codec.encode(PAYLOAD, ctx())
    # A state signed 60 seconds ago.
    real_timestamp = signing.TimestampSigner.timestamp
    monkeypatch.setattr(signing.TimestampSigner, "timestamp",
                        lambda self: signing.b62_encode(int(signing.time.time()) - 60))
    old = codec.encode(PAYLOAD, ctx())
    monkeypatch.setattr(signing.TimestampSigner, "timestamp", real_timestamp)
    assert codec.decode(fresh, ctx())["d"] == "abc123"
    with pytest.raises(InvalidParams, match="expired"):
        codec.decode(old, ctx())


def test_max_age_is_read_from_settings(settings):
    codec = SignedStateCodec()
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_STATE_MAX_AGE_SECONDS": -1}
    token = codec.encode(PAYLOAD, ctx())
    with pytest.raises(InvalidParams, match="expired"):
        codec.decode(token, ctx())
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_STATE_MAX_AGE_SECONDS": 600}
    assert codec.decode(token, ctx())["p"] == ["k2"]
