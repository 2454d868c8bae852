"""
What the browser tests share: Debian's Chromium (``scripts/install-browser``) driven through
Playwright's client, never Playwright's own browser downloads; where screenshots are kept; the
rule that a machine without a browser skips them, except under ``CI=true`` where that fails; and
live servers that serve their own static files, so a page is styled by what the server sends.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import in_ci
from tests.live import ROOT


CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / ".tmp" / "artifacts"
#: Long enough for a cold Chromium on a loaded CI machine, short enough to fail rather than hang.
TIMEOUT_MS = 20_000


def with_static_files(env: Mapping[str, str]) -> dict[str, str]:
    """
    ``env`` (for ``tests.live``) as a project in development (``MCP_TEST_DEBUG=1``: ``DEBUG`` on,
    ``django.contrib.staticfiles`` installed), so its daphne serves the admin's CSS and JavaScript
    itself (``django_mcp.asgi``) as ``runserver`` does.
    """
    return {**env, "MCP_TEST_DEBUG": "1"}


def browser_missing() -> str | None:
    """Why the browser tests cannot run on this machine, or None when they can."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing: run scripts/install-browser (it installs Debian's chromium package)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright Python package is missing: install the project's 'test' extra"
    return None


def require_browser() -> None:
    """Skip the test (fail it under CI=true) when no browser can run here."""
    skip_or_fail(browser_missing(), "the browser tests")


def skip_or_fail(reason: str | None, what: str) -> None:
    """With a ``reason`` the tests cannot run: skip, or fail under ``CI=true``, which must run them all."""
    if reason and in_ci():
        pytest.fail(f"CI=true but {what} cannot run: {reason}", pytrace=False)
    if reason:
        pytest.skip(reason=reason)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium, closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium refuses to start with its sandbox.
        # --disable-dev-shm-usage: containers often have a 64 MB /dev/shm that crashes renderers.
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()
