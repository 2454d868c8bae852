"""
The package as users get it (issue 27): every other test runs on the editable checkout, where a
file the wheel forgets is still on disk. Here the sdist and the wheel are built with PyPA's
``build``, their file lists are checked, and the wheel is installed into a fresh venv outside the
checkout (this interpreter's Python, this environment's Django series). A ``django-admin
startproject`` project set up as README.md says is served by that venv's daphne and driven over
real sockets: the official ``mcp`` SDK's OAuth client through registration, the shipped login and
consent pages, the token and a tool call; every admin page of django_mcp's models as a superuser;
a file prompt over MCP.

The build and the install happen once per module (about a minute, most of it pip).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import django
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live import ROOT, free_port
from tests.oauth.test_sdk_client import MemoryStorage, ScriptedUser, provider

from .installed import SUPERUSER, Dists, Project, ProjectServer, RunserverServer, build_dists, copy_source, install, \
    make_plain_project, make_project, run, source_tree


pytestmark = [pytest.mark.live, pytest.mark.package]

OAUTH_TEMPLATES = [f"django_mcp/oauth/templates/django_mcp/oauth/{name}.html"
                   for name in ("authorize", "base", "login")]
# Named here so the failure says which kind of file went missing; the complete lists come from the tree.
REQUIRED_FILES = [
    *OAUTH_TEMPLATES,
    "django_mcp/stored_prompts/templates/admin/django_mcp_stored_prompts/mcpprompt/change_form.html",
    "django_mcp/stored_prompts/templates/admin/django_mcp_stored_prompts/mcpprompt/preview.html",
    "django_mcp/py.typed",
    "django_mcp/migrations/__init__.py",
    "django_mcp/migrations/0001_squashed_0007_feature_apps.py",
    "django_mcp/oauth/migrations/__init__.py",
    "django_mcp/oauth/migrations/0001_initial.py",
    *(f"django_mcp/{app}/migrations/0001_initial.py" for app in ("tool_admin", "call_log", "query_tools",
                                                                 "stored_prompts")),
    "django_mcp/management/commands/mcp_stdio.py",
    "django_mcp/oauth/management/commands/mcp_token.py",
    "django_mcp/tool_admin/management/commands/mcp_sync_tools.py",
    "django_mcp/template_prompts/templatetags/mcp_prompts.py",
    "django_mcp/ui/templatetags/mcp_apps.py",
    "django_mcp/ui/vendor/mcp-apps-2.0.4.js",  # inlined into every view: no view works without it
    "django_mcp/ui/vendor/LICENSE-ext-apps",
]
CLASSIFIERS = [
    "Environment :: Web Environment",
    "Framework :: Django",
    "Framework :: Django :: 5.2",
    "Framework :: Django :: 6.0",
    "Intended Audience :: Developers",
    "Operating System :: OS Independent",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
    "Programming Language :: Python :: 3.13",
    "Topic :: Internet :: WWW/HTTP",
]
DEFAULT_SCOPES = "mcp:prompts mcp:resources mcp:tools"
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@dataclass
class Built:
    source: Path  # the copy of the tree the archives were built from
    dists: Dists


@dataclass
class Site:
    project: Project
    server: ProjectServer
    install: dict[str, Any]  # describe_install.py's answer
    token: str  # the superuser's personal access token, made with manage.py mcp_token create


def package_files(source: Path) -> list[str]:
    """Every file under django_mcp/ in the tree, as paths relative to the tree ("django_mcp/...")."""
    return sorted(path.relative_to(source).as_posix() for path in (source / "django_mcp").rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts and path.suffix not in {".pyc", ".pyo"})


def template_names(source: Path) -> list[str]:
    """The names Django loads the package's templates by ("django_mcp/oauth/login.html", ...)."""
    return sorted(path.relative_to(directory).as_posix()
                  for directory in (source / "django_mcp").rglob("templates") if directory.is_dir()
                  for path in directory.rglob("*") if path.is_file())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    work = tmp_path_factory.mktemp("package-build")
    source = copy_source(source_tree(), work / "src")
    return Built(source, build_dists(source, work / "dist"))


@pytest.fixture(scope="module")
def site(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    work = tmp_path_factory.mktemp("package-install")
    assert not work.resolve().is_relative_to(ROOT), f"{work} must be outside the checkout"
    venv = work / "venv"
    try:
        # The Django series this environment runs, so the Django 6 leg tests the package on Django 6.
        # pytest and pytest-django: the project's own tests run there with the fixtures the wheel ships.
        install(built.dists.wheel, venv, [f"Django=={django.VERSION[0]}.{django.VERSION[1]}.*", "pytest",
                                          "pytest-django"])
        project = make_project(venv, work / "site", port=free_port())
        project.script("seed_rows.py")
        output = project.manage("mcp_token", "create", "--user", SUPERUSER["username"], "--name", "packaging",
                                "--days", "1")
        token = re.search(r"^mcp_pat_\S+$", output, re.M)
        assert token, output
        described = project.script("describe_install.py", *template_names(built.source))
        with project.server() as server:
            yield Site(project, server, described, token.group(0))
    finally:
        # The venv is large and rebuilt on every run; the project and the server's log stay for debugging.
        shutil.rmtree(venv, ignore_errors=True)


def test_wheel_and_sdist_carry_every_file_of_the_package(built: Built) -> None:
    expected = package_files(built.source)
    assert set(REQUIRED_FILES) <= set(expected), "the tree itself lacks files this test names"

    with zipfile.ZipFile(built.dists.wheel) as wheel:
        in_wheel = set(wheel.namelist())
        dist_info = next(name.split("/")[0] for name in in_wheel if name.split("/")[0].endswith(".dist-info"))
        wheel_metadata = wheel.read(f"{dist_info}/METADATA").decode()
    assert [name for name in REQUIRED_FILES if name not in in_wheel] == []
    assert [name for name in expected if name not in in_wheel] == []
    assert f"{dist_info}/licenses/LICENSE" in in_wheel
    assert "License-Expression: MIT AND Apache-2.0" in wheel_metadata  # ours, and the vendored App SDK's
    assert "License-File: LICENSE" in wheel_metadata
    assert "License-File: django_mcp/ui/vendor/LICENSE-ext-apps" in wheel_metadata
    assert not [name for name in in_wheel if name.startswith(("tests/", "example_project/"))]

    with tarfile.open(built.dists.sdist) as sdist:
        names = sdist.getnames()
    top = names[0].split("/")[0]
    in_sdist = {name.removeprefix(f"{top}/") for name in names}
    assert [name for name in REQUIRED_FILES if name not in in_sdist] == []
    assert [name for name in expected if name not in in_sdist] == []
    assert {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO"} <= in_sdist
    # The guide includes the tested nginx configuration: its page must not point at nothing.
    assert {"docs/howto/deployment.md", "deploy/nginx.conf"} <= in_sdist
    assert not [name for name in in_sdist if name.startswith(("deploy/fleet/", "docs/_build/"))]
    # The tests need the whole checkout; a stray handful of them in the sdist would only mislead.
    assert not [name for name in in_sdist if name.startswith("tests/")]
    assert not [name for name in in_sdist if name.endswith((".pyc", ".sqlite3"))]


def test_installed_from_the_wheel_with_its_metadata(built: Built, site: Site) -> None:
    described = site.install
    venv = site.project.venv.resolve()
    assert Path(described["module"]).resolve().is_relative_to(venv), described["module"]
    assert not Path(described["module"]).resolve().is_relative_to(ROOT)
    assert described["python"] == "%d.%d" % sys.version_info[:2]
    assert described["django"].split(".")[:2] == [str(part) for part in django.VERSION[:2]]

    project = tomllib.loads((built.source / "pyproject.toml").read_text())["project"]
    assert described["version"] == project["version"]
    assert described["summary"] == project["description"]
    assert described["requires_python"] == project["requires-python"]
    assert described["license_expression"] == "MIT AND Apache-2.0"
    assert described["license_files"] == ["LICENSE", "django_mcp/ui/vendor/LICENSE-ext-apps"]
    assert [name for name in CLASSIFIERS if name not in described["classifiers"]] == []
    assert any(name.startswith("Development Status :: ") for name in described["classifiers"])
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in described["files"])
    # Every template the package has loads in the installed project.
    assert {name for name, found in described["templates"].items() if not found} == set()
    assert "django_mcp/oauth/login.html" in described["templates"]


def test_sdk_oauth_client_registers_logs_in_consents_and_calls_a_tool(site: Site) -> None:
    server = site.server
    login = httpx2.get(f"{server.url}/accounts/login/?next=/")
    assert login.status_code == 200 and 'id="login-form"' in login.text, (login.status_code, _error_of(login))

    storage = MemoryStorage()
    user = ScriptedUser(server.url, SUPERUSER["username"], SUPERUSER["password"])

    async def whoami(auth: Any, mode: str) -> str:
        async with asyncio.timeout(60), httpx2.AsyncClient(auth=auth, timeout=30) as http:
            async with Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode) as client:
                assert "whoami" in {tool.name for tool in (await client.list_tools()).tools}
                return (await client.call_tool("whoami", {})).content[0].text

    try:
        answer = asyncio.run(whoami(provider(server, storage, user), "auto"))
    finally:
        user.browser.close()
    assert answer == f"{SUPERUSER['username']} {DEFAULT_SCOPES}", server.log_tail()
    assert user.visits == 1
    # The consent page (django_mcp/oauth/authorize.html) names the client and says what it may do.
    assert "SDK test client" in user.browser.consent_page
    assert "Use the tools this site offers you" in user.browser.consent_page
    assert storage.client_info is not None and storage.tokens is not None and storage.tokens.refresh_token
    # The stored registration and token serve a legacy client too, without the browser.
    assert asyncio.run(whoami(provider(server, storage, None), "legacy")) == answer


def admin_login(base_url: str) -> httpx2.Client:
    """A browser-like client logged in to the admin through /admin/login/ (CSRF cookie and field)."""
    http = httpx2.Client(base_url=base_url, follow_redirects=False, timeout=30)
    page = http.get("/admin/login/?next=/admin/")
    assert page.status_code == 200, page.text[:2000]
    token = _CSRF.search(page.text)
    assert token, page.text[:2000]
    answer = http.post("/admin/login/?next=/admin/", data={
        "csrfmiddlewaretoken": token.group(1), "username": SUPERUSER["username"],
        "password": SUPERUSER["password"], "next": "/admin/"})
    assert answer.status_code == 302 and answer.headers["location"] == "/admin/", answer.text[:2000]
    return http


def add_prompt(http: httpx2.Client) -> str:
    """Write a stored prompt through the admin's add form; its change page's URL."""
    form = http.get("/admin/django_mcp_stored_prompts/mcpprompt/add/")
    assert form.status_code == 200, form.text[:2000]
    answer = http.post("/admin/django_mcp_stored_prompts/mcpprompt/add/", data={
        "csrfmiddlewaretoken": _CSRF.search(form.text).group(1),
        "name": "shelf_tour", "title": "Shelf tour", "description": "A tour of one shelf.", "enabled": "on",
        "arguments": '[{"name": "shelf", "description": "Which shelf"}]',
        "template": "Show me around the {{ shelf }} shelf.", "permission": "", "_continue": "1"})
    assert answer.status_code == 302, answer.text[:3000]
    return answer.headers["location"]


def test_every_django_mcp_admin_page_answers(site: Site) -> None:
    http = admin_login(site.server.url)
    try:
        change_prompt = add_prompt(http)
        pages = site.project.script("admin_pages.py", SUPERUSER["username"])
        labels = {page["model"] for page in pages}
        assert {"django_mcp.McpSession", "django_mcp_stored_prompts.McpPrompt", "django_mcp_tool_admin.McpTool",
                "django_mcp_call_log.McpToolCall", "django_mcp_query_tools.McpQueryTool",
                "django_mcp_oauth.PersonalAccessToken"} <= labels, labels
        assert not [page["model"] for page in pages if page["change"] is None], "seed_rows.py must make a row of each"

        urls: dict[str, int] = {"/admin/": 200}
        for page in pages:
            urls[f"/admin/{page['app_label']}/"] = 200
            urls[page["changelist"]] = 200
            urls[page["add"]] = 200 if page["add_allowed"] else 403
            urls[page["change"]] = 200
        urls[change_prompt] = 200
        urls[change_prompt.rstrip("/").rsplit("/", 1)[0] + "/preview/"] = 200
        answers = {url: http.get(url) for url in urls}
        wrong = {url: (answer.status_code, _error_of(answer)) for url, answer in answers.items()
                 if answer.status_code != urls[url]}
        assert wrong == {}, site.server.log_tail(80)

        preview = http.get(change_prompt.rstrip("/").rsplit("/", 1)[0] + "/preview/",
                           params={"_preview": "1", "shelf": "poetry"})
        assert preview.status_code == 200 and "Show me around the poetry shelf." in preview.text, _error_of(preview)
    finally:
        http.close()


def _error_of(answer: httpx2.Response) -> str:
    """What a failed page says: the exception line of Django's debug page, or the start of the body."""
    if answer.status_code < 400:
        return ""
    found = re.search(r"<title>(.*?)</title>", answer.text, re.S)
    return " ".join((found.group(1) if found else answer.text[:300]).split())


def test_file_prompt_over_mcp_with_a_personal_access_token(site: Site) -> None:
    async def prompts(mode: str) -> tuple[dict[str, Any], Any]:
        headers = {"authorization": f"Bearer {site.token}"}
        async with asyncio.timeout(60), httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(site.server.mcp_url, http_client=http), mode=mode) as client:
                listed = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
                got = await client.get_prompt("library.welcome", {"reader": "Ursula", "tone": "formal"})
                return listed, got

    for mode in ("legacy", "2026-07-28"):
        listed, got = asyncio.run(prompts(mode))
        assert "library.welcome" in listed, (mode, sorted(listed))
        welcome = listed["library.welcome"]
        assert welcome.title == "Welcome a reader"
        assert [(argument.name, argument.required) for argument in welcome.arguments or []] == [
            ("reader", True), ("tone", False)]
        assert got.description == "A welcome for a new member of the library."
        assert [(message.role, message.content.text) for message in got.messages] == [
            ("user", "Write a formal welcome for Ursula, who just joined the library."),
            ("assistant", "Welcome, Ursula!")], mode


def test_a_view_from_the_projects_template_with_the_installed_sdk(site: Site) -> None:
    """django_mcp.ui from the wheel: a tool's view rendered from the project's template, the App SDK inlined."""
    from mcp.client.extension import advertise

    shows_views = advertise("io.modelcontextprotocol/ui", {"mimeTypes": ["text/html;profile=mcp-app"]})

    async def view(mode: str) -> tuple[Any, Any]:
        headers = {"authorization": f"Bearer {site.token}"}
        async with asyncio.timeout(60), httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(site.server.mcp_url, http_client=http), mode=mode,
                              extensions=[shows_views]) as client:
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                return tools["shelf_card"], (await client.read_resource(tools["shelf_card"].meta["ui"]["resourceUri"]))

    for mode in ("legacy", "2026-07-28"):
        tool, read = asyncio.run(view(mode))
        assert tool.meta["ui"] == {"resourceUri": "ui://default/shelf_card"}, mode
        [page] = read.contents
        assert page.mime_type == "text/html;profile=mcp-app"
        assert f"Shelf card for {SUPERUSER['username']}" in page.text  # rendered for the token's user
        assert "/* @modelcontextprotocol/ext-apps 2.0.4" in page.text and "globalThis.McpApps=" in page.text


def test_the_projects_own_tests_use_the_shipped_fixtures(site: Site) -> None:
    """
    The project runs its pytest suite (site_files/library/test_mcp.py) with pytest-django and the
    fixtures django_mcp registers with pytest (entry point pytest11): nothing but the wheel and the
    test runner installed, as a team adopting it would.
    """
    project = site.project
    (project.root / "pytest.ini").write_text("[pytest]\nDJANGO_SETTINGS_MODULE = mysite.settings\n")
    output = run([project.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "library"], cwd=project.root,
                 env=project.env(), timeout=300)
    assert re.search(r"^4 passed", output, re.M), output
    listed = run([project.python, "-m", "pytest", "--fixtures", "-q", "library"], cwd=project.root,
                 env=project.env(), timeout=120)
    assert "mcp_client_factory" in listed and "django_mcp" in listed, listed


def test_a_project_without_channels_serves_mcp_from_djangos_runserver(site: Site, tmp_path: Path) -> None:
    """
    The quickest start (issue 42): a ``startproject`` project that adds only ``django_mcp`` and
    ``McpView`` — no Channels, no daphne, no ``asgi.py`` — passes ``manage.py check`` and is an
    MCP server under Django's own WSGI ``runserver``, for clients of both eras.
    """
    project = make_plain_project(site.project.venv, tmp_path / "plain", port=free_port())
    assert "System check identified no issues" in project.manage("check")

    async def call(mode: str) -> tuple[str, list[str]]:
        async with asyncio.timeout(60), Client(server.mcp_url, mode=mode) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("count_users", {})
            return result.content[0].text, names

    with RunserverServer(project) as server:
        for mode in ("legacy", "2026-07-28"):
            text, names = asyncio.run(call(mode))
            assert names == ["count_users"], mode
            assert text == "1 users", mode
        get = httpx2.get(server.mcp_url, headers={"accept": "text/event-stream"}, timeout=10)
        assert get.status_code == 405 and get.headers["allow"] == "POST, DELETE"
        assert "daphne" not in server.log_tail(50).lower()
