"""
A staff member in the admin of a live server, over real HTTP (standard library only): log in,
then add or change an ``McpPrompt`` through the admin's own forms, CSRF token and all.
"""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from tests.live import ROOT, server_env


_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def create_superuser(env: Mapping[str, str], username: str, password: str) -> None:
    """Create (or reset) a superuser in the live server's database, from a process of its own."""
    code = ("import django; django.setup(); from django.contrib.auth import get_user_model; "
            f"User = get_user_model(); u, _ = User.objects.get_or_create(username={username!r}); "
            f"u.is_staff = u.is_superuser = True; u.set_password({password!r}); u.save()")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), timeout=60,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout


class AdminBrowser:
    """Cookies and CSRF tokens, as a browser keeps them, for one server's ``/admin/``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def open(self, path: str, data: dict[str, Any] | None = None) -> tuple[int, str, str]:
        body = urllib.parse.urlencode(data, doseq=True).encode() if data is not None else None
        request = urllib.request.Request(self.base_url + path, data=body)
        try:
            with self.opener.open(request, timeout=20) as response:
                return response.status, response.geturl(), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, path, error.read().decode(errors="replace")

    def submit(self, path: str, fields: dict[str, Any]) -> tuple[int, str, str]:
        """GET the form at ``path`` for its CSRF token, then POST ``fields`` to it."""
        status, _, page = self.open(path)
        assert status == 200, (status, page[:500])
        token = _CSRF.search(page)
        assert token, page[:500]
        return self.open(path, {"csrfmiddlewaretoken": token.group(1), **fields})

    def login(self, username: str, password: str) -> None:
        status, url, page = self.submit("/admin/login/?next=/admin/", {"username": username, "password": password,
                                                                       "next": "/admin/"})
        assert status == 200 and not url.endswith("/login/?next=/admin/"), page[:500]

    def save_prompt(self, name: str, template: str, *, pk: int | None = None, **fields: Any) -> int:
        """Add (or, with ``pk``, change) a prompt through the admin form; returns its primary key."""
        path = f"/admin/django_mcp_stored_prompts/mcpprompt/{pk}/change/" if pk else "/admin/django_mcp_stored_prompts/mcpprompt/add/"
        data = {"name": name, "title": "", "description": "", "arguments": "[]", "template": template,
                "enabled": "on", "permission": "", "_continue": "1", **fields}
        status, url, page = self.submit(path, data)
        assert status == 200 and "/change/" in url, (status, url, page[:3000])
        return int(re.search(r"/mcpprompt/(\d+)/change/", url).group(1))
