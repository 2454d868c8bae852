"""
nginx for the fleet: the system's own binary (installed by ``scripts/install-nginx`` when missing
and permitted), running ``deploy/nginx.conf`` rendered into the run folder.

The guide's file is an http-context file (Debian keeps such files in /etc/nginx/conf.d/). What a
distribution's main ``nginx.conf`` adds around it (events, MIME types, where nginx keeps its pid
and temporary files) is written here, pointing into the run folder, so nginx needs no root and
touches nothing of the system's own configuration.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .processes import FleetError


ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "nginx.conf"
INSTALLER = ROOT / "scripts" / "install-nginx"
PLACEHOLDERS = ("MCP_UPSTREAM_SERVERS", "MCP_LISTEN", "MCP_STATIC_ROOT", "MCP_LOG_DIR")


def find_binary() -> str | None:
    """The nginx binary: on PATH, or where Debian puts it (/usr/sbin is not on every user's PATH)."""
    found = shutil.which("nginx")
    if found:
        return found
    return "/usr/sbin/nginx" if Path("/usr/sbin/nginx").is_file() else None


def ensure_binary(*, may_install: bool) -> str:
    """The nginx binary, installed first with ``scripts/install-nginx`` when missing and allowed."""
    found = find_binary()
    if found is None and may_install:
        subprocess.run([str(INSTALLER)], check=False)  # never fails; explains what it could not do
        found = find_binary()
    if found is None:
        raise FleetError("nginx is not installed: run scripts/install-nginx as root (it installs Debian's nginx "
                         "package), or install nginx from your system's packages.")
    return found


def render_site(upstreams: Sequence[str], *, listen: str, static_root: Path, log_dir: Path,
                template: Path = TEMPLATE) -> str:
    """``deploy/nginx.conf`` with its four ``${...}`` placeholders replaced, as envsubst would."""
    values = {
        "MCP_UPSTREAM_SERVERS": "\n    ".join(f"server {address} max_fails=3 fail_timeout=10s;"
                                             for address in upstreams),
        "MCP_LISTEN": listen,
        "MCP_STATIC_ROOT": str(static_root).rstrip("/") + "/",  # alias maps /static/x to ROOT/x
        "MCP_LOG_DIR": str(log_dir),
    }
    text = template.read_text()
    for name, value in values.items():
        text = text.replace("${" + name + "}", value)
    # Anything else spelled like a placeholder, even in a comment, would be filled in by envsubst
    # (the guide's other way of rendering the file) and not here: the two must agree.
    leftover = [line for line in text.splitlines() if "${" in line]
    if leftover:
        raise FleetError(f"{template} has placeholders the fleet does not fill: {leftover}")
    return text


def mime_types() -> str:
    """The system's mime.types next to nginx's own configuration, or the few types the admin needs."""
    for candidate in (Path("/etc/nginx/mime.types"), Path("/usr/local/etc/nginx/mime.types")):
        if candidate.is_file():
            return f"include {candidate};"
    return ("types { text/html html; text/css css; application/javascript js; image/svg+xml svg; "
            "image/png png; image/gif gif; font/woff2 woff2; application/json json; }")


def _user_directive(run_dir: Path) -> str:
    """
    Started as root, nginx runs its workers as ``nobody``, who must enter every folder above the
    static files. A run folder under a private one (pytest's, a home folder) is out of its reach,
    and there the workers keep the fleet's own user instead: a local harness on 127.0.0.1, not a
    server (Debian's own nginx.conf names www-data).
    """
    if os.geteuid() != 0:
        return ""  # nginx cannot change users anyway
    reachable = all(folder.stat().st_mode & stat.S_IXOTH for folder in [run_dir, *run_dir.parents])
    return "" if reachable else "user root;\n"


def render_main(run_dir: Path, site: Path) -> str:
    """The main configuration around the site file, every path inside ``run_dir``."""
    temp = run_dir / "nginx-temp"
    return f"""\
# Written by scripts/fleet (deploy/fleet/nginx.py): what a distribution's /etc/nginx/nginx.conf
# provides around deploy/nginx.conf, with every path in this run folder.
{_user_directive(run_dir)}worker_processes 1;
pid {run_dir}/nginx.pid;
error_log {run_dir}/logs/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    {mime_types()}
    default_type application/octet-stream;
    sendfile on;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {site};
}}
"""


def write_config(run_dir: Path, upstreams: Sequence[str], *, listen: str, static_root: Path) -> Path:
    """Render both files into ``run_dir``; returns the main configuration's path."""
    (run_dir / "nginx-temp").mkdir(exist_ok=True)
    site = run_dir / "nginx-site.conf"
    site.write_text(render_site(upstreams, listen=listen, static_root=static_root, log_dir=run_dir / "logs"))
    main = run_dir / "nginx-main.conf"
    main.write_text(render_main(run_dir, site))
    return main


def command(binary: str, run_dir: Path, main: Path) -> list[str]:
    """nginx in the foreground (a child of the fleet), its early errors in the run folder too."""
    return [binary, "-p", str(run_dir), *_error_log_option(binary, run_dir), "-c", str(main), "-g", "daemon off;"]


def _error_log_option(binary: str, run_dir: Path) -> list[str]:
    # -e (nginx >= 1.19.5) keeps the errors from before the configuration is read out of the
    # compiled-in log (often /var/log/nginx/error.log, not writable without root).
    usage = subprocess.run([binary, "-h"], capture_output=True, text=True, timeout=30)
    return ["-e", str(run_dir / "logs" / "nginx-error.log")] if "-e filename" in usage.stderr + usage.stdout else []


def check(binary: str, run_dir: Path, main: Path) -> None:
    """``nginx -t``: refuse to start on a configuration nginx rejects, with its reason."""
    test = [arg for arg in command(binary, run_dir, main) if arg not in ("-g", "daemon off;")] + ["-t", "-q"]
    result = subprocess.run(test, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise FleetError(f"nginx rejects {main}:\n{result.stderr.strip()}")


def upstream_addresses(log_line: str) -> list[str]:
    """The workers a line of the ``mcp`` access log names (``upstream=A, B`` when nginx retried)."""
    match = re.search(r"upstream=(\S+(?:, \S+)*)", log_line)
    return [] if match is None or match.group(1) == "-" else match.group(1).split(", ")
