"""
``manage.py mcp_doctor`` against the deployment of docs/howto/deployment.md: the fleet (two daphne
workers behind nginx on ``deploy/nginx.conf``, PostgreSQL, Redis) with OAuth required
(``DEMO_OAUTH=1``) must pass every check, in both eras, with a token got as clients get theirs;
behind a proxy that buffers (tests/doctor/relay.py) in front of it, the doctor must name the buffering.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.deployment.conftest import Fleet
from tests.doctor.relay import BufferingRelay
from tests.oauth.flow import full_flow


pytestmark = [pytest.mark.live, pytest.mark.services]

#: The demo's tool that reports progress shelf by shelf (12 shelves, 0.1 s each).
PROGRESS = ["--progress-tool", "check_shelves", "--progress-arguments", '{"pause": 0.1}']
INSPECTOR = "http://localhost:6274"


@pytest.fixture(scope="module")
def demo_oauth() -> Iterator[None]:
    """The fleet's workers require a bearer token (example_project.settings reads DEMO_OAUTH)."""
    previous = os.environ.get("DEMO_OAUTH")
    os.environ["DEMO_OAUTH"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("DEMO_OAUTH", None)
        else:
            os.environ["DEMO_OAUTH"] = previous


@pytest.fixture(scope="module")
def fleet(demo_oauth: None, fleet: Fleet) -> Fleet:
    """tests/deployment/conftest.py's fleet, started with DEMO_OAUTH=1 (demo_oauth comes first)."""
    return fleet


@pytest.fixture(scope="module")
def token(fleet: Fleet) -> str:
    """The demo reader's access token, through nginx: discovery, registration, login, consent, PKCE."""
    _, _, tokens, browser = full_flow(fleet.mcp_url, fleet.public_url, "reader", "reader-demo-password")
    browser.close()
    return tokens.access_token


def doctor(*args: str) -> tuple[str, int]:
    """``manage.py mcp_doctor ARGS``: its output and exit code."""
    buffer = io.StringIO()
    try:
        call_command("mcp_doctor", *args, stdout=buffer)
    except CommandError as error:
        return buffer.getvalue() + f"\n{error}", error.returncode
    return buffer.getvalue(), 0


def test_the_fleet_passes_every_check(fleet: Fleet, token: str) -> None:
    output, code = doctor(fleet.mcp_url, "--token", token, "--origin", INSPECTOR, *PROGRESS)
    assert code == 0, output
    # Not checked: the fetch of a client ID metadata document (no --client-id-url: the fleet's
    # workers reach no public HTTPS document here; tests/doctor/test_cimd.py checks it).
    # The Server Card names both transports, so the 2024-11-05 one is checked too, through nginx and
    # across the workers (a POST may reach the worker that does not hold the stream).
    assert output.rstrip().endswith("22 ok, 0 warning(s), 0 failed, 1 not checked"), output
    assert "ok    sse             HTTP+SSE transport" in output
    assert f"resource_metadata={fleet.public_url}/.well-known/oauth-protected-resource/mcp" in output


def test_a_buffering_proxy_in_front_of_the_fleet_is_named(fleet: Fleet, token: str) -> None:
    """
    A proxy that holds each answer until it ends, in front of the fleet's nginx: the progress
    arrives with the result. (Its address is not the fleet's PUBLIC_BASE_URL, which the doctor
    names too.)
    """
    with BufferingRelay(fleet.port) as relay:
        output, code = doctor(f"http://127.0.0.1:{relay.port}/mcp", "--token", token, "--no-register", *PROGRESS)
    assert code == 1
    assert "FAIL  sse-buffering   Unbuffered event streams (progress before the result)  [buffering]" in output, output
    assert "every event arrived at once" in output
