"""
What users install, made as they make it: the sdist and the wheel built by PyPA's ``build`` from a
copy of this checkout, the wheel installed into a fresh venv outside the checkout, a project made by
that venv's ``django-admin startproject`` and set up as README.md says ("Using it in your project",
"OAuth 2.1", and docs/oauth.md's shipped login page), served by that venv's daphne.

Independent of pytest, so it also works from a shell::

    from tests.packaging.installed import build_dists, install, make_project

    dists = build_dists(Path("/tmp/x/src"), Path("/tmp/x/dist"))
    venv = install(dists.wheel, Path("/tmp/x/venv"))
    project = make_project(venv, Path("/tmp/x/site"), port=8123)
    with project.server() as server:
        print(server.mcp_url)

``MCP_PACKAGE_SOURCE`` names another tree to build instead of this checkout (for example an export
of an older commit, to see the test fail on the package it made).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.live import ROOT, LiveServer


__all__ = ["SUPERUSER", "Dists", "Project", "ProjectServer", "build_dists", "copy_source", "install", "make_project",
           "source_tree"]

SITE_FILES = Path(__file__).resolve().parent / "site_files"
SUPERUSER = {"username": "admin", "password": "installed-admin-pass-1", "email": "admin@example.com"}
SETTINGS_MODULE = "mysite.settings"
APP = "mysite.asgi:application"

# Not part of what a clone of the repository has: virtualenvs, caches, build output, npm trees.
# .hypothesis: Hypothesis's example database, written while other tests run (copying it raced
# with their temporary files); .import_linter_cache: lint-imports' cache. A clone has neither.
_SKIP_AT_ROOT = {".git", ".tmp", ".pytest_cache", "build", "dist", ".mypy_cache", ".ruff_cache", ".hypothesis",
                 ".import_linter_cache"}
_SKIP_ANYWHERE = {"__pycache__", "node_modules"}


class CommandFailed(AssertionError):
    """A build, install or management command failed; the message has its output."""


def source_tree() -> Path:
    """The tree to package: ``MCP_PACKAGE_SOURCE`` if set, else this checkout."""
    return Path(os.environ.get("MCP_PACKAGE_SOURCE") or ROOT).resolve()


def run(command: Sequence[str | os.PathLike[str]], *, cwd: Path, env: Mapping[str, str] | None = None,
        timeout: float = 300) -> str:
    """Run a command; its stdout+stderr, or ``CommandFailed`` with the end of them."""
    words = [str(word) for word in command]
    try:
        result = subprocess.run(words, cwd=cwd, env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise CommandFailed(f"$ {' '.join(words)}\ntimed out after {timeout:g} s:\n{exc.output or ''}") from exc
    if result.returncode != 0:
        raise CommandFailed(f"$ {' '.join(words)}\nexit {result.returncode}:\n{result.stdout[-6000:]}")
    return result.stdout


def copy_source(source: Path, target: Path) -> Path:
    """Copy the tree as a clone would have it (no venvs, caches or build output) to ``target``."""
    source = source.resolve()

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {name for name in names if name in _SKIP_ANYWHERE or name.endswith((".pyc", ".pyo", ".sqlite3"))}
        if Path(directory).resolve() == source:
            skipped |= {name for name in names
                        if name in _SKIP_AT_ROOT or name.startswith(".venv") or name.endswith(".egg-info")}
        return skipped

    shutil.copytree(source, target, ignore=ignore, symlinks=True)
    return target


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path
    log: str


def build_dists(source: Path, outdir: Path) -> Dists:
    """
    ``python -m build`` on ``source``: the sdist, then the wheel built *from the sdist*, so a file
    the sdist forgets is missing from the wheel too, as it would be for anyone installing the sdist.
    """
    # Isolated builds (build's default): build installs the [build-system] requirements
    # (setuptools>=77) from the package index into a throwaway env, as pip does for every user.
    # --no-isolation would build with the test venv's own setuptools, which is whatever the venv
    # came with (65.x under scripts/_bootstrap.sh) and too old to read PEP 639's license-files:
    # a build nobody else makes. Isolation costs a few seconds.
    log = run([sys.executable, "-m", "build", "--outdir", outdir, source], cwd=source, timeout=300)
    sdists = sorted(outdir.glob("*.tar.gz"))
    wheels = sorted(outdir.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, (sdists, wheels, log[-3000:])
    return Dists(sdists[0], wheels[0], log)


def _child_env(venv: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """``os.environ`` without what points at this checkout or the test venv, with ``venv`` first on PATH."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"}}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def install(wheel: Path, venv: Path, requirements: Sequence[str] = ()) -> Path:
    """
    A new venv at ``venv`` made by the interpreter running this code (so each CI leg tests its own
    Python), with ``wheel`` and ``requirements`` installed from the package index as a user would.
    """
    run([sys.executable, "-m", "venv", venv], cwd=venv.parent, timeout=120)
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, *requirements],
        cwd=venv.parent, env=_child_env(venv), timeout=420)
    return venv


SETTINGS_TAIL = '''

# --- tests/packaging: django_mcp set up as README.md says ("Using it in your project", "OAuth 2.1"). ---
# daphne goes first: after django.contrib.staticfiles, which startproject lists, daphne's check E001
# refuses to start ("Daphne must be listed before django.contrib.staticfiles").
INSTALLED_APPS = ["daphne", *INSTALLED_APPS, "channels", "django_mcp", "django_mcp.model_resources",
                  "django_mcp.template_prompts", "django_mcp.stored_prompts", "django_mcp.tool_admin",
                  "django_mcp.call_log", "django_mcp.query_tools", "django_mcp.ui"]
ASGI_APPLICATION = "mysite.asgi.application"
CHANNEL_LAYERS = {{"default": {{"BACKEND": "channels.layers.InMemoryChannelLayer"}}}}

from django_mcp.oauth.provider import oauth2_provider_settings

INSTALLED_APPS += ["oauth2_provider", "django_mcp.oauth", "library"]
OAUTH2_PROVIDER = oauth2_provider_settings()
LOGIN_URL = "/accounts/login/"
DJANGO_MCP = {{
    "SERVER_NAME": "library",
    "INSTRUCTIONS": "A library catalogue.",
    "PUBLIC_BASE_URL": "http://127.0.0.1:{port}",
    "REQUIRE_AUTHENTICATION": True,
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "django_mcp.oauth.authentication.OAuth2Authentication",
        "django_mcp.oauth.authentication.PersonalAccessTokenAuthentication",
    ],
}}
ALLOWED_HOSTS = ["127.0.0.1"]
'''

ASGI = '''"""ASGI for mysite, as README.md "Using it in your project" writes it."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
django_asgi_app = get_asgi_application()

import django_mcp.asgi  # noqa: E402

application = django_mcp.asgi.application(django_asgi_app)   # /mcp -> MCP, the rest -> Django
'''

URLS_TAIL = '''

# --- tests/packaging: the login page django_mcp.oauth ships (docs/oauth.md), the OAuth URLs (README). ---
from django.contrib.auth.views import LoginView
from django.urls import include

urlpatterns += [
    path("accounts/login/", LoginView.as_view(template_name="django_mcp/oauth/login.html"), name="login"),
    path("", include("django_mcp.oauth.urls")),
]
'''


class Project:
    """A ``startproject`` project in ``root`` that runs on ``venv``'s interpreter."""

    def __init__(self, root: Path, venv: Path, port: int) -> None:
        self.root, self.venv, self.port = root, venv, port
        self.python = venv / "bin" / "python"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return _child_env(self.venv, {"DJANGO_SETTINGS_MODULE": SETTINGS_MODULE, **(extra or {})})

    def manage(self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 180) -> str:
        return run([self.python, "manage.py", *args], cwd=self.root, env=self.env(env), timeout=timeout)

    def script(self, name: str, *args: str) -> Any:
        """Run one of site_files' scripts (copied beside manage.py); its stdout parsed as JSON, if any."""
        output = run([self.python, name, *args], cwd=self.root, env=self.env(), timeout=120).strip()
        return json.loads(output.splitlines()[-1]) if output else None

    def server(self, **kwargs: Any) -> ProjectServer:
        return ProjectServer(self, **kwargs)


def make_project(venv: Path, root: Path, port: int) -> Project:
    """
    ``django-admin startproject mysite`` and ``manage.py startapp library`` with ``venv``'s
    commands, then what README.md tells a project to add, the app's ``mcp.py``, model and file
    prompt (site_files/library), ``migrate`` and ``createsuperuser``.
    """
    project = start_project(venv, root, port, "library")
    shutil.copytree(SITE_FILES / "library", root / "library", dirs_exist_ok=True)
    for script in SITE_FILES.glob("*.py"):
        shutil.copy(script, root / script.name)
    settings = root / "mysite" / "settings.py"
    settings.write_text(settings.read_text() + SETTINGS_TAIL.format(port=port))
    (root / "mysite" / "asgi.py").write_text(ASGI)
    urls = root / "mysite" / "urls.py"
    urls.write_text(urls.read_text() + URLS_TAIL)
    project.manage("makemigrations", "library")
    migrate_with_superuser(project)
    return project


def start_project(venv: Path, root: Path, port: int, app: str) -> Project:
    """``django-admin startproject mysite`` in ``root`` and ``manage.py startapp <app>``, with ``venv``'s commands."""
    root.mkdir(parents=True)
    project = Project(root, venv, port)
    run([venv / "bin" / "django-admin", "startproject", "mysite", root], cwd=root, env=_child_env(venv))
    project.manage("startapp", app)
    return project


def migrate_with_superuser(project: Project) -> None:
    """``migrate``, then ``createsuperuser`` of :data:`SUPERUSER`."""
    project.manage("migrate", "--noinput")
    project.manage("createsuperuser", "--noinput", env={
        "DJANGO_SUPERUSER_USERNAME": SUPERUSER["username"], "DJANGO_SUPERUSER_PASSWORD": SUPERUSER["password"],
        "DJANGO_SUPERUSER_EMAIL": SUPERUSER["email"]})


class ProjectServer(LiveServer):
    """
    ``tests.live.LiveServer`` (its waiting, logging and process-group clean-up) serving the project
    with the fresh venv's ``daphne`` from the project's directory, on the project's fixed port
    (its settings name it in ``PUBLIC_BASE_URL``).
    """

    def __init__(self, project: Project, *, startup_timeout: float = 60.0) -> None:
        super().__init__(APP, port=project.port, startup_timeout=startup_timeout, name="installed-package")
        self.project = project

    def command(self) -> list[str]:
        return [str(self.project.venv / "bin" / "daphne"), "-b", self.host, "-p", str(self.port), self.app]

    def working_directory(self) -> Path:
        return self.project.root

    def child_env(self) -> dict[str, str]:
        return self.project.env()


PLAIN_SETTINGS_TAIL = '''

# --- tests/packaging: the plain view in a project without Channels (docs/howto/existing-gunicorn-project.md). ---
INSTALLED_APPS += ["django_mcp", "catalog"]
ALLOWED_HOSTS = ["127.0.0.1"]
# Under a WSGI server the plain view holds no stream: no channel layer is needed.
SILENCED_SYSTEM_CHECKS = ["django_mcp.W001"]
'''

PLAIN_URLS_TAIL = '''

# --- tests/packaging: the MCP endpoint as a plain view. ---
from django_mcp.views import McpView

urlpatterns += [path("mcp", McpView.as_view())]
'''

PLAIN_TOOLS = '''"""The plain-view project's tools: one that reads the database, as any view would."""

from django.contrib.auth import get_user_model

from django_mcp import tool


@tool(annotations={"readOnlyHint": True})
def count_users(active_only: bool = True) -> str:
    """How many user accounts the site has."""
    users = get_user_model().objects.all()
    if active_only:
        users = users.filter(is_active=True)
    return f"{users.count()} users"
'''


def make_plain_project(venv: Path, root: Path, port: int) -> Project:
    """
    A ``startproject`` project with no Channels, daphne or ``asgi.py`` change: ``django_mcp`` in
    INSTALLED_APPS, a ``catalog`` app with one tool, and ``McpView`` at ``/mcp`` in ``urls.py``
    (the how-to "Add django_mcp to an existing gunicorn project"), migrated, with a superuser.
    """
    project = start_project(venv, root, port, "catalog")
    (root / "catalog" / "mcp.py").write_text(PLAIN_TOOLS)
    settings = root / "mysite" / "settings.py"
    settings.write_text(settings.read_text() + PLAIN_SETTINGS_TAIL)
    urls = root / "mysite" / "urls.py"
    urls.write_text(urls.read_text() + PLAIN_URLS_TAIL)
    migrate_with_superuser(project)
    return project


class RunserverServer(ProjectServer):
    """The project served by Django's own ``manage.py runserver`` (WSGI), not daphne."""

    def command(self) -> list[str]:
        return [str(self.project.python), "manage.py", "runserver", "--noreload", f"{self.host}:{self.port}"]

    def _listening_logged(self) -> bool:
        # "Starting development server at …" (Django 5.2), "Starting WSGI development server at …" (6.1)
        return f"development server at http://{self.host}:{self.port}/" in self.log_text()
