"""``manage.py mcp_install``: the configuration an MCP client needs, printed or merged into its file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ._shared import resolve_user, stdio_entry

# Each client's configuration file, as its own documentation places it (checked November 2026):
# Claude Desktop's claude_desktop_config.json (Settings › Developer › Edit Config), Claude Code's
# project-scope .mcp.json, Cursor's .cursor/mcp.json, VS Code's .vscode/mcp.json.
CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")


def claude_desktop_config() -> Path:
    """Where Claude Desktop keeps its configuration on this system."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / "Claude" / \
            "claude_desktop_config.json"
    return Path.home() / ".config" / "Claude" / "claude_desktop_config.json"


def default_config(client: str) -> Path:
    """The file ``--write`` merges into: the user's for Claude Desktop, the current project's for the others."""
    if client == "claude-desktop":
        return claude_desktop_config()
    return Path.cwd() / {"claude-code": ".mcp.json", "cursor": ".cursor/mcp.json", "vscode": ".vscode/mcp.json"}[client]


def entry_for(client: str, username: str | None, url: str | None) -> dict[str, Any]:
    """The client's entry for this server, in the shape its documentation gives."""
    if url is None:
        stdio = stdio_entry(username)
        return {"type": "stdio", **stdio} if client in ("claude-code", "vscode") else stdio
    if client == "cursor":
        return {"url": url}
    return {"type": "http", "url": url}


def section_of(client: str) -> str:
    """The top-level key that holds the servers: VS Code's ``servers``, everyone else's ``mcpServers``."""
    return "servers" if client == "vscode" else "mcpServers"


class Command(BaseCommand):
    """Prints (or merges into the client's file) what Claude Desktop, Claude Code, Cursor or VS Code need."""

    help = ("Print the configuration that CLIENT (claude-desktop, claude-code, cursor or vscode) needs to use this "
            "project's MCP server: started by the client over stdio as --user (default), or reached at --url over "
            "Streamable HTTP. --write merges it into the client's configuration file instead (Claude Desktop's, or "
            "the current project's .mcp.json, .cursor/mcp.json or .vscode/mcp.json; --config to choose another), "
            "keeping the servers already there.")
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("client", choices=CLIENTS, help="The MCP client to configure.")
        how = parser.add_mutually_exclusive_group()
        how.add_argument("--user", help="Username every call runs as, for a server the client starts (stdio).")
        how.add_argument("--url", help="The MCP endpoint's URL, for a server the client reaches over HTTP "
                                       "(e.g. https://example.com/mcp); the client signs in with OAuth.")
        parser.add_argument("--name", default="django", help="The server's name in the client (default: django).")
        parser.add_argument("--write", action="store_true", help="Merge into the client's configuration file.")
        parser.add_argument("--config", help="The configuration file --write merges into (default: the client's).")

    def handle(self, *args: Any, **options: Any) -> None:
        client, url, username = options["client"], options["url"], options["user"]
        if url is not None and not url.startswith(("http://", "https://")):
            raise CommandError(f"--url must be an http:// or https:// address, not {url!r}.")
        if username:
            resolve_user(username)  # a configuration for a user who does not exist would fail only in the client
        if client == "claude-desktop" and url is not None:
            raise CommandError("Claude Desktop adds remote servers in its own settings, not in its file: "
                               f"Settings › Connectors › Add custom connector, with the URL {url}.")
        entry = entry_for(client, username, url)
        section = section_of(client)
        if not options["write"]:
            self.stdout.write(json.dumps({section: {options["name"]: entry}}, indent=2))
            return
        path = Path(options["config"]).expanduser() if options["config"] else default_config(client)
        config = self.read(path)
        servers = config.setdefault(section, {})
        if not isinstance(servers, dict):
            raise CommandError(f"{path}: {section!r} is not an object; fix it by hand first.")
        replaced = options["name"] in servers
        servers[options["name"]] = entry
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        self.stdout.write(f"{'Replaced' if replaced else 'Added'} the server {options['name']!r} in {path}.")
        if client == "claude-desktop":
            self.stdout.write("Restart Claude Desktop to load it.")

    def read(self, path: Path) -> dict[str, Any]:
        if not path.exists():
            return {}
        try:
            config = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as error:
            raise CommandError(f"{path} is not valid JSON ({error}); nothing was written.") from None
        if not isinstance(config, dict):
            raise CommandError(f"{path} does not hold a JSON object; nothing was written.")
        return config
