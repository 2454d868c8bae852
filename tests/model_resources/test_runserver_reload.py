"""
``runserver`` reloading a newcomer's project (django_mcp/model_resources/apps.py): a project made
with ``django-admin startproject`` and the tutorial's settings, served by daphne's ``runserver``
with its autoreloader, survives models.py saved again and again.

Once, one reload in twelve died in Django's autoreloader with ``KeyError:
'django.contrib.postgres.fields'``: until an ``mcp.py`` existed nothing had imported Django REST
framework at start-up, so the model resources' system check imported it from runserver's own
thread, DRF tried ``django.contrib.postgres.fields`` (no psycopg), and the failed import left
``sys.modules`` while the reloader's thread was walking it. The app now imports what its checks
need when it is ready, before the reloader starts: the first test shows that at once; the second
reloads a real runserver as the reader of the tutorial does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.live import free_port, server_env

SETTINGS_EXCERPT = '''
INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_mcp",
    "django_mcp.model_resources",
    "library",
]
ASGI_APPLICATION = "mysite.asgi.application"
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
'''
ASGI = '''import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
django_asgi_app = get_asgi_application()

import django_mcp.asgi  # noqa: E402

application = django_mcp.asgi.application(django_asgi_app)
'''
MODELS = '''from django.db import models


class Book(models.Model):
    title = models.CharField(max_length=200)  # saved {n} time(s)
'''
RELOADS = 6


def run(folder: Path, *command: str) -> str:
    env = server_env({"DJANGO_SETTINGS_MODULE": None, "PYTHONPATH": None})
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``startproject mysite``, ``startapp library`` with one model, the tutorial's settings; no ``mcp.py`` yet."""
    folder = tmp_path_factory.mktemp("reload")
    run(folder, sys.executable, "-m", "django", "startproject", "mysite", ".")
    run(folder, sys.executable, "manage.py", "startapp", "library")
    settings = folder / "mysite" / "settings.py"
    settings.write_text(settings.read_text() + SETTINGS_EXCERPT)
    (folder / "mysite" / "asgi.py").write_text(ASGI)
    (folder / "library" / "models.py").write_text(MODELS.format(n=0))
    run(folder, sys.executable, "manage.py", "migrate", "-v", "0")
    return folder


def test_the_model_resources_import_what_their_checks_need_at_start_up(project: Path) -> None:
    out = run(project, sys.executable, "-c", "import sys, django, os; os.environ['DJANGO_SETTINGS_MODULE'] = "
              "'mysite.settings'; django.setup(); print('rest_framework' in sys.modules)")
    assert out.strip() == "True", "DRF would be imported first by a system check, on runserver's own thread"


def test_runserver_reloads_the_project_again_and_again(project: Path) -> None:
    port = free_port()
    log = project / "runserver.log"
    env = server_env({"DJANGO_SETTINGS_MODULE": None, "PYTHONPATH": None, "PYTHONUNBUFFERED": "1"})
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}"], cwd=project,
                                  env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_serving(port, log, starts=1)
        for n in range(1, RELOADS + 1):
            time.sleep(1.1)  # the reloader compares modification times (StatReloader: once a second)
            (project / "library" / "models.py").write_text(MODELS.format(n=n))
            wait_serving(port, log, starts=n + 1)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=10)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "KeyError" not in text, text[-3000:]


def wait_serving(port: int, log: Path, starts: int, timeout: float = 60.0) -> None:
    """Until runserver has started ``starts`` times (its banner) and answers /healthz."""
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(errors="replace") if log.exists() else ""
        assert "Traceback" not in text, text[-3000:]
        if text.count("Quit the server with") >= starts:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
        assert time.monotonic() < deadline, f"runserver did not come back (start {starts}):\n{text[-3000:]}"
        time.sleep(0.1)
