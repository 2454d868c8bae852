"""
The documentation's code cannot rot (issue 30): the tutorial is done, the README's project is
built, and every Python block of the README, the tutorial and the how-to guides compiles.

The tutorial (docs/tutorial/, in its index's order) is followed as a reader follows it, in a
temporary folder: its ``console`` commands are run (``django-admin startproject``, ``manage.py
migrate``, ``curl``, the MCP Inspector's CLI, ``python client.py``…) and what they print is compared
with what the page shows; its files are written (or, for ``(excerpt)`` blocks, merged) as the
pages say (see tests/docs/samples.py for the conventions); ``runserver`` is a real daphne server,
restarted after a change as ``runserver`` reloads. What the prose has the reader do in a browser
(switch a tool off in the admin, sign in with OAuth) is done over HTTP the same way. The tutorial's
install is done as written: ``python -m venv .venv`` in the folder, then ``pip install
/path/to/django_mcp`` from a copy of this checkout as a clone has it, so every later command runs
the package as a reader's virtual environment has it, not this checkout.

The Inspector's commands need ``tools/inspector`` (``scripts/install-conformance``, npm); without
it they are skipped (a failure in CI), and everything else still runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import in_ci
from tests.live import LiveServer, free_port, server_env
from tests.packaging.installed import copy_source

from .samples import DOCS, README, ROOT, Command, Fence, commands, fences, json_subset, merge_excerpt, \
    rst_code_blocks, tutorial_pages


BIN = Path(sys.executable).parent
INSPECTOR = Path(os.environ.get("MCP_INSPECTOR") or ROOT / "tools" / "inspector" / "node_modules" / ".bin"
                 / "mcp-inspector")
INSPECTOR_REASON = "the MCP Inspector is not installed (run scripts/install-conformance; needs npm)"
SUPERUSER = {"username": "admin", "password": "tutorial-admin-pass-1", "email": "admin@example.com"}
# How the pages write what differs on the reader's machine.
DOC_ADDRESS = "127.0.0.1:8000"
DOC_FOLDER = "/home/you/tutorial"
DOC_TOKEN = "mcp_pat_…"
# The folder the reader makes and enters (mkdir tutorial, cd tutorial) is the test's own.
SETUP = re.compile(r"^(mkdir|cd) [\w.-]+$")
# Where the pages say the reader's checkout of the repository is.
DOC_CHECKOUT = "/path/to/django_mcp"
# Blocks that are fragments by nature (a config to paste into another program, a class without
# its imports): at most this many, each marked <!-- no-test --> on the line before its fence.
MAX_NO_TEST = 3
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class ProjectServer(LiveServer):
    """
    ``tests.live.LiveServer`` serving a project of the docs (``mysite.asgi``) from its folder, with
    the interpreter ``python`` (the reader's virtual environment's) and the environment ``env``.
    """

    def __init__(self, root: Path, port: int, python: Path = Path(sys.executable),
                 env: dict[str, str | None] | None = None) -> None:
        super().__init__("mysite.asgi:application", {"DJANGO_SETTINGS_MODULE": "mysite.settings", **(env or {})},
                         port=port, name="docs-project")
        self.root = root
        self.python = python

    def command(self) -> list[str]:
        return [str(self.python), "-m", "daphne", "-b", self.host, "-p", str(self.port), *self.args, self.app]

    def working_directory(self) -> Path:
        return self.root


def run(words: list[str], cwd: Path, *, stdin: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 120, status: int = 0) -> str:
    """
    Run a command of the docs; its stdout (stderr in the failure message when it fails). Its
    stdout goes to a file, not a pipe: Node writes to a pipe asynchronously, and the Inspector
    CLI's ``process.exit(5)`` after a tool's isError answer lost what it had printed when the
    machine was busy; to a file Node writes synchronously.
    """
    with tempfile.TemporaryFile(mode="w+") as out:
        result = subprocess.run(words, cwd=cwd, input=stdin, stdout=out, stderr=subprocess.PIPE, text=True,
                                timeout=timeout,
                                env=server_env({"DJANGO_SETTINGS_MODULE": "mysite.settings", **(env or {})}))
        out.seek(0)
        stdout = out.read()
    assert result.returncode == status, \
        f"$ {shlex.join(words)}\nexit {result.returncode}\n{stdout}{result.stderr}"
    return stdout


def compare(command: Command, actual: str, substitute: Callable[[str], str]) -> None:
    """What a command printed against what its page shows (a JSON subset, or lines in order)."""
    shown = substitute(command.output).strip()
    if not shown:
        return
    try:
        shown_json = json.loads(shown)
    except ValueError:
        shown_json = None
    if shown_json is not None:
        problems = json_subset(shown_json, json.loads(actual))
        assert problems == [], f"{command.fence.where}: $ {command.text}\n" + "\n".join(problems) + f"\n{actual}"
        return
    lines = iter(line.rstrip() for line in actual.replace("\r\n", "\n").splitlines())
    missing = [line for line in shown.splitlines() if line.rstrip() not in lines]
    assert missing == [], f"{command.fence.where}: $ {command.text}\nnot printed: {missing}\nprinted:\n{actual}"


def _pairs(values: list[str]) -> dict[str, str]:
    return dict(value.split("=", 1) for value in values)


async def inspector_by_sdk(arguments: list[str]) -> Any:
    """
    What ``mcp-inspector --cli URL --method …`` prints, asked through the official ``mcp`` SDK
    in the legacy era (the Inspector's default for a URL): the result object as JSON. Only the
    options the pages use: ``--method``, ``--tool-name``, ``--tool-arg``, ``--uri``,
    ``--prompt-name``, ``--prompt-args``, ``--header``.
    """
    url, options, current = arguments[1], {}, None
    for word in arguments[2:]:
        if word.startswith("--"):
            current = word
            options.setdefault(current, [])
        else:
            options[current].append(word)
    headers = dict(header.split(": ", 1) for header in options.get("--header", []))
    method = options["--method"][0]
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    transport = streamable_http_client(url, http_client=http)
    async with asyncio.timeout(60), http, Client(transport, mode="legacy") as client:
        if method == "tools/list":
            # The Inspector lists nothing, without asking, when the server declares no tools capability.
            if client.server_capabilities.tools is None:
                return {"tools": []}
            result: Any = await client.list_tools()
        elif method == "tools/call":
            # The Inspector reads each key=value's value as JSON when it can (numbers, booleans).
            arguments_ = {key: _json_or_text(value) for key, value in _pairs(options.get("--tool-arg", [])).items()}
            result = await client.call_tool(options["--tool-name"][0], arguments_)
        elif method == "resources/list":
            result = await client.list_resources()
        elif method == "resources/read":
            result = await client.read_resource(options["--uri"][0])
        elif method == "prompts/get":
            result = await client.get_prompt(options["--prompt-name"][0], _pairs(options.get("--prompt-args", [])))
        else:
            raise AssertionError(f"inspector_by_sdk does not know --method {method}")
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


class Reader:
    """Follows the tutorial's pages in a folder, as a reader at a terminal would."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root, self.home = root, home
        self.port = free_port()
        self.server: ProjectServer | None = None
        self.stale = False  # a file changed since the server started: runserver would have reloaded
        self.watched: set[Path] = set()  # the modules that existed when the server started
        self.shell_waiting = False
        self.token: str | None = None
        self.skipped: list[str] = []
        self.oauth_tools: list[str] = []
        self.stdio_config: dict[str, Any] = {}
        # The interpreter and scripts the reader's commands run: the virtual environment's once
        # the page has made and activated one.
        self.python, self.bin = Path(sys.executable), BIN
        self.venv: Path | None = None
        self.checkout: Path | None = None

    def env(self) -> dict[str, str | None]:
        """The environment of the reader's commands: their activated virtual environment, if any."""
        if self.venv is None:
            return {}
        return {"VIRTUAL_ENV": str(self.venv), "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
                "PYTHONPATH": None, "PYTHONHOME": None}

    def setup(self, words: list[str]) -> str:
        """The install the first page describes: a virtual environment, activated, the package from a checkout."""
        if words[:3] == ["python", "-m", "venv"]:
            return run([sys.executable, "-m", "venv", str(self.root / words[3])], self.root, timeout=120)
        if words[0] == "source":
            self.venv = (self.root / words[1]).parent.parent
            self.python, self.bin = self.venv / "bin" / "python", self.venv / "bin"
            return ""
        assert self.venv is not None, "pip install before the page activates a virtual environment"
        return run([str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *words[2:]],
                   self.root, env=self.env(), timeout=600)

    # --- what differs between the page and this machine -----------------------------------------

    def substitute(self, text: str) -> str:
        """A page's text with this machine's folder, port and token for the page's placeholders."""
        if self.venv is None:
            text = text.replace(f"{DOC_FOLDER}/.venv/bin/python", sys.executable)
        text = text.replace(DOC_FOLDER, str(self.root))
        if self.checkout is not None:
            text = text.replace(DOC_CHECKOUT, str(self.checkout))
        text = text.replace(DOC_ADDRESS, f"127.0.0.1:{self.port}")
        return text.replace(DOC_TOKEN, self.token) if self.token else text

    # --- the pages ------------------------------------------------------------------------------

    def follow(self, page: Path) -> None:
        """Do what one page says, block by block, in order."""
        if page.name == "clients.md":
            self.switch_tool("search_books", enabled=True)  # "If you switched search_books off…"
        for fence in fences(page):
            if fence.target:
                self.write(fence)
            elif fence.lang == "pycon":
                assert self.shell_waiting, f"{fence.where}: a pycon block without `python manage.py shell` before it"
                self.shell_waiting = False
                code = "\n".join(line[4:] for line in fence.text.splitlines() if line.startswith((">>> ", "... ")))
                run([str(self.python), "manage.py", "shell"], self.root, stdin=code, env=self.env())
            elif fence.lang == "console":
                for command in commands(fence):
                    self.prose_before(page, command)
                    self.command(command)
            elif fence.lang == "python":
                raise AssertionError(f"{fence.where}: a tutorial Python block must name its file on its first line")
            elif fence.lang == "json":
                json.loads(fence.text)
        assert not self.shell_waiting, f"{page}: `python manage.py shell` without the pycon block it runs"

    def write(self, fence: Fence) -> None:
        """Write (or merge) a file as the block says; the server reloads, as runserver would."""
        path, excerpt = fence.target
        target = self.root / path
        text = self.substitute(fence.text)
        if excerpt:
            text = merge_excerpt(target.read_text(), text)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        # runserver's autoreloader restarts when a module it has loaded changes; a new module (the
        # app's first mcp.py) or template goes unnoticed until the reader restarts it, as the pages say.
        self.stale = self.stale or target in self.watched

    def command(self, command: Command) -> None:
        """Run one ``$`` command of a page as the reader would, and compare its output with the page's."""
        if SETUP.match(command.text):
            return
        if DOC_CHECKOUT in command.text and self.checkout is None:
            # A clone of the repository, as the reader has one (no virtualenvs, caches, npm trees).
            self.checkout = copy_source(ROOT, self.home / "django_mcp")
        words = shlex.split(self.substitute(command.text))
        if words[:3] == ["python", "-m", "venv"] or words[0] in ("source", "pip"):
            output = self.setup(words)
        elif words[0] == "django-admin":
            output = run([str(self.bin / "django-admin"), *words[1:]], self.root, env=self.env())
        elif words[:2] == ["python", "manage.py"]:
            output = self.manage(words[2:])
        elif words[0] == "python":
            output = run([str(self.python), *words[1:]], self.root, timeout=60, env=self.env())
        elif words[0] == "curl":
            self.serve()
            output = run(["curl", "--silent", "--show-error", *words[1:]], self.root, timeout=30)
        elif words[0] == "npx" and words[1].startswith("@modelcontextprotocol/inspector"):
            if "--cli" not in words:
                self.skipped.append(f"{command.fence.where}: the Inspector's web UI (a browser)")
                return
            self.serve()
            if not INSPECTOR.exists():
                # The same request through the official SDK, so the page's output is still checked.
                self.skipped.append(f"{command.fence.where}: {INSPECTOR_REASON}")
                output = json.dumps(asyncio.run(inspector_by_sdk(words[2:])))
                compare(command, output, self.substitute)
                return
            # HOME: the Inspector writes a catalog there. PATH: the Node 22 that tools/inspector installs.
            # The Inspector exits with 5 when a tool answers isError, as the page says it does.
            output = run([str(INSPECTOR), *words[2:]], self.home, timeout=60, env={
                "HOME": str(self.home), "PATH": f"{INSPECTOR.parent}{os.pathsep}{os.environ['PATH']}"},
                status=5 if '"isError": true' in command.output else 0)
        elif words[0] == "claude":
            self.skipped.append(f"{command.fence.where}: Claude Code is not installed here")
            return
        else:
            raise AssertionError(f"{command.fence.where}: the test does not know how to run `{command.text}`")
        compare(command, output, self.substitute)

    def manage(self, arguments: list[str]) -> str:
        """``python manage.py …``: runserver and shell are the reader's interactive ones."""
        name = arguments[0]
        if name == "runserver":  # the reader (re)starts it
            self.stale = True
            self.serve()
            return ""
        if name == "shell":
            self.shell_waiting = True
            return ""
        if name == "createsuperuser":  # the reader answers its questions; the test passes them in
            # The name the page gives is the one later parts sign in with (--user admin).
            assert arguments[1:] == ["--username", SUPERUSER["username"]], arguments
            return run([str(self.python), "manage.py", *arguments, "--noinput"], self.root, env={**self.env(),
                "DJANGO_SUPERUSER_USERNAME": SUPERUSER["username"], "DJANGO_SUPERUSER_PASSWORD":
                SUPERUSER["password"], "DJANGO_SUPERUSER_EMAIL": SUPERUSER["email"]})
        output = run([str(self.python), "manage.py", *arguments], self.root, env=self.env())
        if name == "mcp_stdio" and "--print-config" in arguments:
            self.stdio_config = json.loads(output)
        if name == "mcp_token" and arguments[1] == "create":
            self.token = output.strip().splitlines()[-1]
            assert re.fullmatch(r"mcp_pat_[\w-]{43}", self.token), output
        return output

    def serve(self) -> ProjectServer:
        """The running server, restarted when a file changed since it started."""
        if self.server is None or self.stale or not self.server.running:
            if self.server is not None:
                # A reader saves the next file seconds after the last call, not at once: by then the
                # call log has written its queue (every quarter second), which a stop would lose.
                time.sleep(0.5)
                self.server.stop()
            self.server = ProjectServer(self.root, self.port, self.python, self.env()).start()
            self.watched = set(self.root.rglob("*.py"))
            self.stale = False
        return self.server

    def stdio_tools(self) -> list[str]:
        """Start the server as Claude Desktop would from the printed configuration; the tools it lists."""
        (server,) = self.stdio_config["mcpServers"].values()
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "docs", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        output = run([server["command"], *server["args"]], self.home, env={**self.env(), **server["env"]},
                     stdin="".join(json.dumps(message) + "\n" for message in messages))
        answers = {answer.get("id"): answer for answer in map(json.loads, output.splitlines())}
        return [tool["name"] for tool in answers[2]["result"]["tools"]]

    def stop(self) -> None:
        """Stop the server, if one runs."""
        if self.server is not None:
            self.server.stop()

    # --- what the prose has the reader do -------------------------------------------------------

    def prose_before(self, page: Path, command: Command) -> None:
        """What the prose before ``command`` has the reader do in a browser, done over HTTP."""
        if page.name == "admin.md" and "tools/list" in command.text:
            # "Untick enabled in the row of search_books and press Save (or … Disable the selected tools)"
            self.switch_tool("search_books", enabled=False)
        if page.name == "oauth.md" and "mcp_token create" in command.text:
            # "Connect with a sign-in": a client registers, the user signs in and consents, lend_book
            self.sign_in_and_lend()

    def admin(self) -> httpx2.Client:
        """A browser signed in to the admin as the tutorial's superuser."""
        server = self.serve()
        http = httpx2.Client(base_url=server.url, timeout=30)
        page = http.get("/admin/login/?next=/admin/")
        answer = http.post("/admin/login/?next=/admin/", data={
            "csrfmiddlewaretoken": _CSRF.search(page.text).group(1), "username": SUPERUSER["username"],
            "password": SUPERUSER["password"], "next": "/admin/"})
        assert answer.status_code == 302, answer.text[:2000]
        return http

    def switch_tool(self, name: str, *, enabled: bool) -> None:
        """The admin action *Enable*/*Disable the selected tools* on one tool's row."""
        http = self.admin()
        try:
            changelist = "/admin/django_mcp_tool_admin/mcptool/"
            page = http.get(changelist)
            assert page.status_code == 200 and name in page.text, page.text[:2000]
            row = re.search(rf'name="_selected_action" value="(\d+)"[^>]*aria-label="[^"]* - {name}"', page.text)
            assert row, page.text[:4000]
            answer = http.post(changelist, data={
                "csrfmiddlewaretoken": _CSRF.search(page.text).group(1), "index": "0",
                "action": "enable_tools" if enabled else "disable_tools", "_selected_action": row.group(1)})
            assert answer.status_code == 302, answer.text[:2000]
            # The call log has the calls made so far ("The call log"): parts 3 and 4 call through the Inspector.
            log = http.get("/admin/django_mcp_call_log/mcptoolcall/")
            assert log.status_code == 200, log.text[:2000]
            assert enabled or not INSPECTOR.exists() or "search_books" in log.text, log.text[:2000]
        finally:
            http.close()

    def sign_in_and_lend(self) -> None:
        """What the Inspector's web UI does in "Connect with a sign-in", with the official SDK's OAuth client."""
        from tests.oauth.test_sdk_client import MemoryStorage, ScriptedUser, provider

        server = self.serve()
        user = ScriptedUser(server.url, SUPERUSER["username"], SUPERUSER["password"])

        async def connect() -> tuple[list[str], str]:
            async with asyncio.timeout(60), httpx2.AsyncClient(auth=provider(server, MemoryStorage(), user),
                                                               timeout=30) as http:
                async with Client(streamable_http_client(server.mcp_url, http_client=http)) as client:
                    names = [tool.name for tool in (await client.list_tools()).tools]
                    lent = await client.call_tool("lend_book", {"book_id": 1})
                    return names, lent.content[0].text

        try:
            self.oauth_tools, lent = asyncio.run(connect())
        finally:
            user.browser.close()
        assert self.oauth_tools == ["search_books", "count_shelves", "lend_book"]
        assert lent == "Lent out: A Wizard of Earthsea, by admin."
        assert "Use the tools this site offers you" in user.browser.consent_page
        # "look at the call log in the admin: the call is logged with the user and the OAuth client"
        time.sleep(0.5)  # the log writes its queue every quarter second
        http = self.admin()
        try:
            log = http.get("/admin/django_mcp_call_log/mcptoolcall/?tool=lend_book")
        finally:
            http.close()
        assert log.status_code == 200 and "SDK test client" in log.text, log.text[:3000]


@pytest.mark.live
def test_the_tutorial_works_as_written(tmp_path: Path) -> None:
    pages = tutorial_pages()
    assert [page.name for page in pages] == ["project.md", "resources.md", "tools.md", "prompts.md", "admin.md",
                                             "clients.md", "oauth.md", "testing.md"]
    reader = Reader(tmp_path / "tutorial", tmp_path / "home")
    reader.root.mkdir()
    reader.home.mkdir()
    try:
        for page in pages:
            reader.follow(page)
        run([str(reader.python), "manage.py", "check"], reader.root, env=reader.env())
        assert reader.venv is not None, "the tutorial never made the virtual environment it installs into"
        installed = run([str(reader.python), "-c", "import django_mcp; print(django_mcp.__file__)"], reader.root,
                        env=reader.env()).strip()
        assert Path(installed).is_relative_to(reader.venv), f"the pages ran the checkout's django_mcp: {installed}"
        # Part 6's Claude Desktop configuration, still right after part 7: "--user admin runs every
        # call as the superuser …, so lend_book is there too".
        assert reader.stdio_tools() == ["search_books", "count_shelves", "lend_book"]
    finally:
        reader.stop()
    assert reader.oauth_tools, "the OAuth part was not reached"
    not_run = [line for line in reader.skipped if INSPECTOR_REASON not in line]
    assert len(not_run) == 2, not_run  # the Inspector's web UI, Claude Code (clients.md)
    # Without the Inspector its requests went through the SDK, and their outputs were checked;
    # CI has it (scripts/install-conformance), so there the commands themselves must have run.
    if in_ci() and len(reader.skipped) > len(not_run):
        pytest.fail(INSPECTOR_REASON, pytrace=False)


@pytest.mark.live
def test_the_quickstart_works_as_written(tmp_path: Path) -> None:
    """docs/quickstart.md, done as the tutorial is: installed from a checkout, one tool, called."""
    reader = Reader(tmp_path / "quickstart", tmp_path / "home")
    reader.root.mkdir()
    reader.home.mkdir()
    try:
        reader.follow(DOCS / "quickstart.md")
    finally:
        reader.stop()
    assert reader.venv is not None and reader.server is not None, "the quickstart installed or served nothing"
    not_run = [line for line in reader.skipped if INSPECTOR_REASON not in line]
    assert len(not_run) == 1, not_run  # Claude Code
    if in_ci() and len(reader.skipped) > len(not_run):
        pytest.fail(INSPECTOR_REASON, pytrace=False)


def readme_section(start: str, end: str) -> list[Fence]:
    """The README's fences between two of its headings."""
    text = README.read_text().splitlines()
    first, last = text.index(start) + 1, text.index(end) + 1
    return [fence for fence in fences(README) if first < fence.line < last]


@pytest.mark.live
def test_the_readme_project_serves_what_its_samples_say(tmp_path: Path) -> None:
    """
    "Using it in your project": its settings, asgi.py and mcp.py in a startproject project, served;
    then the authentication how-to's class and settings on top.
    """
    reader = Reader(tmp_path / "mysite", tmp_path / "home")
    reader.root.mkdir()
    run([str(BIN / "django-admin"), "startproject", "mysite", "."], reader.root)
    reader.manage(["startapp", "library"])
    # The README shows no models; its mcp.py reads the tutorial's (Book.title, Author.name).
    reader.write(next(fence for fence in fences(DOCS / "tutorial" / "resources.md")
                      if fence.target == ("library/models.py", False)))
    section = readme_section("## Using it in your project", "### Feature apps")
    applied = [fence.target for fence in section if fence.target]
    assert applied == [("mysite/settings.py", True), ("mysite/asgi.py", False), ("library/mcp.py", False),
                       ("library/mcp.py", True)]
    for fence in section:
        if fence.target:
            reader.write(fence)
    reader.manage(["makemigrations", "library"])
    reader.manage(["migrate"])
    run([sys.executable, "manage.py", "shell"], reader.root, stdin=(
        "from library.models import Author, Book\n"
        "le_guin = Author.objects.create(name='Ursula K. Le Guin')\n"
        "Book.objects.create(title='A Wizard of Earthsea', author=le_guin, published=1968)\n"))

    async def use(url: str) -> None:
        async with asyncio.timeout(30), Client(url) as client:
            # lend_book and ReturnBook ask for library.change_book, which an anonymous client lacks.
            assert [tool.name for tool in (await client.list_tools()).tools] == ["search_books"]
            found = await client.call_tool("search_books", {"query": "earthsea"})
            assert found.structured_content == {"result": [{"id": 1, "title": "A Wizard of Earthsea"}]}
            book = await client.read_resource("library://books/1")
            assert json.loads(book.contents[0].text) == {"id": 1, "title": "A Wizard of Earthsea"}
            authors = await client.read_resource("library://authors")
            assert json.loads(authors.contents[0].text) == [{"id": 1, "name": "Ursula K. Le Guin"}]
            prompt = await client.get_prompt("recommend", {"author": "Le Guin"})
            assert prompt.messages[0].content.text == "I like Le Guin and feel curious. Recommend three books."

    async def as_alice(url: str) -> list[str]:
        http = httpx2.AsyncClient(headers={"X-Api-Key": "k-3f9a1c"})
        async with asyncio.timeout(30), http, Client(streamable_http_client(url, http_client=http)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    try:
        run([sys.executable, "manage.py", "check"], reader.root)
        asyncio.run(use(reader.serve().mcp_url))

        # docs/howto/authentication.md on the same project: its class, its settings, its curl.
        written = []
        for fence in fences(DOCS / "howto" / "authentication.md"):
            if fence.target:
                reader.write(fence)
                written.append(fence.target)
        assert written == [("mysite/mcp_auth.py", False), ("mysite/settings.py", True)]
        run([sys.executable, "manage.py", "shell", "-c",
             "from django.contrib.auth.models import User; User.objects.create_user('alice')"], reader.root)
        server = reader.serve()
        anonymous = httpx2.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers={"Accept": "application/json, text/event-stream"})
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"] == 'ApiKey realm="mcp", header="X-Api-Key"'
        curl = next(command for fence in fences(DOCS / "howto" / "authentication.md") if fence.lang == "console"
                    for command in commands(fence) if command.text.startswith("curl"))
        initialized = json.loads(run(shlex.split(reader.substitute(curl.text)), reader.root))
        assert initialized["result"]["protocolVersion"] == "2025-11-25", initialized
        assert asyncio.run(as_alice(server.mcp_url)) == ["search_books"]
    finally:
        reader.stop()


def documented_python() -> list[Fence]:
    """
    Every Python block of the README, the quickstart, the tutorial, the how-to guides and the topic
    guides, and every Python ``code-block`` of the reference's reStructuredText pages.
    """
    pages = [README, *sorted(DOCS.glob("*.md")), *sorted((DOCS / "tutorial").glob("*.md")),
             *sorted((DOCS / "howto").glob("*.md")), *sorted((DOCS / "explanation").glob("*.md")),
             *sorted((DOCS / "reference").glob("*.md"))]
    blocks = [fence for page in pages for fence in fences(page) if fence.lang == "python"]
    return blocks + [block for page in sorted((DOCS / "reference").glob("*.rst"))
                     for block in rst_code_blocks(page) if block.lang == "python"]


def test_every_python_sample_compiles() -> None:
    blocks = documented_python()
    assert len(blocks) >= 20
    marked = [fence.where for fence in blocks if fence.no_test]
    assert len(marked) <= MAX_NO_TEST, f"more fragments than the docs should need: {marked}"
    for fence in blocks:
        if not fence.no_test:
            compile(fence.text, fence.where, "exec")
