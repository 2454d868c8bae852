"""
Live servers for the doctor: a protected one (``MCP_TEST_OAUTH=1``) and a token for it got the way
clients get theirs (tests/oauth/flow.py), and servers with one fault each (``settings_faults``).
Each is started once per session and shared by the modules here.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.live import LiveServer
from tests.oauth.flow import create_user, full_flow


USER, PASSWORD = "doctor", "doctor-pass-1"
#: tests/testapp's tool that reports progress, run long enough to time (5 steps, 0.2 s each).
PROGRESS = ["--progress-tool", "slow_steps", "--progress-arguments", '{"steps": 5, "delay": 0.2}']
#: The MCP Inspector's origin: on loopback, trusted by a loopback server (CORS and Origin).
INSPECTOR = "http://localhost:6274"


@pytest.fixture(scope="session")
def doctor_env(sqlite_server_env: Mapping[str, str]) -> Mapping[str, str]:
    env = {**sqlite_server_env, "MCP_TEST_OAUTH": "1"}
    create_user(env, USER, PASSWORD)
    return MappingProxyType(env)


@pytest.fixture(scope="session")
def protected_server(doctor_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with LiveServer(env=doctor_env, name="doctor-oauth") as server:
        yield server


@pytest.fixture(scope="session")
def token(protected_server: LiveServer) -> str:
    """An access token for the protected server: discovery, registration, login, consent, PKCE."""
    _, _, tokens, browser = full_flow(protected_server.mcp_url, protected_server.url, USER, PASSWORD)
    browser.close()
    return tokens.access_token


def faulty_server(doctor_env: Mapping[str, str], fault: str) -> LiveServer:
    env = {**doctor_env, "DJANGO_SETTINGS_MODULE": "tests.doctor.settings_faults", "MCP_DOCTOR_FAULT": fault}
    return LiveServer(env=env, name=f"doctor-{fault}")


@pytest.fixture(scope="session")
def wrong_url_server(doctor_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with faulty_server(doctor_env, "wrong_public_url") as server:
        yield server


@pytest.fixture(scope="session")
def no_metadata_server(doctor_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with faulty_server(doctor_env, "no_metadata") as server:
        yield server


@pytest.fixture(scope="session")
def no_card_server(doctor_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with faulty_server(doctor_env, "no_card") as server:
        yield server


def doctor(*args: str) -> tuple[str, int]:
    """Run ``manage.py mcp_doctor ARGS`` here; its output and exit code."""
    out = io.StringIO()
    try:
        call_command("mcp_doctor", *args, stdout=out)
    except CommandError as error:
        return out.getvalue() + f"\n{error}", error.returncode
    return out.getvalue(), 0


def by_check(findings: list[Any]) -> dict[str, Any]:
    return {finding.check: finding for finding in findings}
