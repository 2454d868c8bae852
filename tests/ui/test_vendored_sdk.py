"""
The MCP Apps SDK views inline (django_mcp/ui/vendor/, written by scripts/install-app-sdk): the
pinned version, a classic script that defines ``McpApps`` with the names a page uses, nothing that
would end the inline script early, and (where Node is installed) valid JavaScript.
"""

import shutil
import subprocess

import pytest

from django_mcp.ui.templatetags.mcp_apps import SDK_FILE, SDK_VERSION, mcp_app_script
from tests.conftest import in_ci
from tests.live import ROOT


def test_the_vendored_sdk_is_the_pinned_build_as_a_global() -> None:
    text = SDK_FILE.read_text(encoding="utf-8")
    assert text.startswith(f"/* @modelcontextprotocol/ext-apps {SDK_VERSION}, dist/src/app-with-deps.js")
    assert "globalThis.McpApps={" in text and "App:" in text and "PostMessageTransport:" in text
    assert "</script" not in text.lower() and "\nexport" not in text
    assert "Apache License" in (SDK_FILE.parent / "LICENSE-ext-apps").read_text()
    check = subprocess.run([str(ROOT / "scripts" / "install-app-sdk")], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and f"ext-apps {SDK_VERSION}" in check.stdout, check.stderr


def test_the_tag_inlines_it() -> None:
    assert mcp_app_script() == f"<script>{SDK_FILE.read_text(encoding='utf-8')}</script>"


def test_it_is_valid_javascript_that_defines_the_app_class() -> None:
    node = shutil.which("node")
    if node is None:
        if in_ci():
            pytest.fail("CI=true but Node is not installed (scripts/install-conformance installs it)")
        pytest.skip(reason="Node is not installed (the file was checked with node --check when it was vendored)")
    script = ("globalThis.window=globalThis;require('vm').runInThisContext(require('fs').readFileSync("
              f"{str(SDK_FILE)!r},'utf8'));console.log(typeof McpApps.App, typeof McpApps.PostMessageTransport)")
    ran = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert ran.stdout.split() == ["function", "function"], ran.stderr
