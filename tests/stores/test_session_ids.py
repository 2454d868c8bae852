"""Signed session ids (django_mcp/stores/session_ids.py): what they carry, and what they refuse."""

import time

from django_mcp.stores import session_ids
from django_mcp.stores.sessions import new_session_id

FACTS = {"protocol_version": "2025-11-25", "user_key": "user:7", "client_capabilities": {"sampling": {}},
         "client_info": {"name": "client", "version": "1.0"}}


def signed(key: str | None = None, **overrides) -> str:
    session_id = session_ids.sign(key or new_session_id(), **{**FACTS, "issued_at": int(time.time()), **overrides})
    assert session_id is not None
    return session_id


def test_a_signed_id_carries_the_sessions_facts_under_its_key():
    key = new_session_id()
    session_id = signed(key)
    assert session_ids.is_signed(session_id) and session_ids.key_of(session_id) == key
    facts = session_ids.read(session_id)
    assert (facts.key, facts.protocol_version, facts.user_key) == (key, "2025-11-25", "user:7")
    assert facts.client_capabilities == {"sampling": {}}
    assert facts.client_info == {"name": "client", "version": "1.0"}
    assert abs(facts.issued_at - time.time()) < 5


def test_a_signed_id_is_visible_ascii_as_the_spec_requires():
    session_id = signed(client_info={"name": "clïent ✓", "version": "1"})
    assert all(0x21 <= ord(ch) <= 0x7E for ch in session_id)


def test_a_plain_id_is_its_own_key_and_not_signed():
    plain = new_session_id()
    assert not session_ids.is_signed(plain) and session_ids.key_of(plain) == plain
    assert session_ids.read(plain) is None


def test_an_altered_id_is_refused():
    session_id = signed()
    key, _, rest = session_id.partition(".")
    assert session_ids.read(f"{new_session_id()}.{rest}") is None  # another session's key
    assert session_ids.read(session_id[:-2] + ("AA" if not session_id.endswith("AA") else "BB")) is None
    assert session_ids.read(f"{key}.garbage:sig") is None
    assert session_ids.read(f"{key}.") is None


def test_an_id_signed_with_another_secret_key_is_refused(settings):
    session_id = signed()
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    assert session_ids.read(session_id) is None


def test_an_id_signed_with_a_fallback_key_is_still_read(settings):
    old_key = settings.SECRET_KEY
    session_id = signed()
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "the-new-secret-key-" + "y" * 40, [old_key]
    assert session_ids.read(session_id) is not None


def test_facts_too_large_for_a_header_get_no_signed_id():
    big = {"experimental": {"blob": {"data": "".join(chr(0x4E00 + n) for n in range(2000))}}}
    assert session_ids.sign(new_session_id(), **{**FACTS, "client_capabilities": big, "issued_at": 0}) is None
    assert session_ids.read("a" * 40 + "." + "b" * session_ids.MAX_LENGTH) is None
