"""
A revocation reaches every worker (issue 41, part 3): two daphne workers on PostgreSQL and Redis,
credentials checked only hourly, so that what ends a stream is the announcement. A personal access
token revoked from a third process (``save()``, as the admin's action does) ends its legacy GET
stream on worker A and its ``subscriptions/listen`` stream on worker B within two seconds; another
user's stream on A goes on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping

import pytest

from tests.transports.workers import Workers, own_redis_prefix, publish_from_third_process, two_workers

from .flow import create_user
from .test_stream_credentials import ends_within, open_legacy, open_listen, personal_token


@pytest.fixture(scope="module")
def env(services: Mapping[str, str]) -> Mapping[str, str]:
    made = {**own_redis_prefix(services, "credentials"), "MCP_TEST_OAUTH": "1", "MCP_TEST_CREDENTIAL_CHECK": "3600"}
    for username in ("erin", "fred"):
        create_user(made, username, f"{username}-pass-1")
    return made


@pytest.fixture(scope="module")
def workers(env: Mapping[str, str]) -> Iterator[Workers]:
    with two_workers(env, keepalive="0.5", prefix="credentials") as pair:
        yield pair


def test_a_revocation_from_another_process_ends_the_users_streams_on_every_worker(
        workers: Workers, env: Mapping[str, str]) -> None:
    token, other_token = personal_token(env, "erin"), personal_token(env, "fred")
    _, on_a = open_legacy(workers.a, token)
    on_b = open_listen(workers.b, token)
    _, others = open_legacy(workers.a, other_token)
    try:
        assert not ends_within(on_a, 1.0) and not ends_within(on_b, 0.5)
        publish_from_third_process(
            env, "from django.utils import timezone",
            "from django_mcp.oauth.models import PersonalAccessToken, token_digest",
            f"token = PersonalAccessToken.objects.get(digest=token_digest({token!r}))",
            "token.revoked = timezone.now()", "token.save()")
        started = time.monotonic()
        assert ends_within(on_a, 5.0) and ends_within(on_b, 5.0), "a stream outlived its revoked token"
        assert time.monotonic() - started < 3.0
        assert not ends_within(others, 1.5)  # fred's stream goes on
    finally:
        for stream in (on_a, on_b, others):
            stream.close()
