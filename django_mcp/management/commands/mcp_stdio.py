"""Serve MCP on stdin/stdout, for clients that start the server as a subprocess."""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core.management.base import BaseCommand, CommandError

from django_mcp.transports.stdio import serve_stdio


USER_ENV = "DJANGO_MCP_USER"


class Command(BaseCommand):
    help = ("Serve MCP over stdio (newline-delimited JSON-RPC), both protocol eras. Every call runs as the user "
            f"named by --user or ${USER_ENV}; without one, as an anonymous user.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--user", help=f"Username to act as (default: ${USER_ENV}, else anonymous).")
        parser.add_argument("--print-config", action="store_true",
                            help="Print a client configuration (command, args, env) to paste, and exit.")
        parser.add_argument("--name", default="django", help="Server name in the printed configuration.")

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["user"] or os.environ.get(USER_ENV) or None
        if options["print_config"]:
            self.stdout.write(json.dumps(self.client_config(options["name"], username), indent=2))
            return
        user = self.resolve_user(username)
        # From here on stdout carries MCP messages only (MCP spec 2026-07-28, basic/transports/stdio): anything else that prints
        # — user code, libraries — goes to stderr instead.
        sys.stdout = sys.stderr
        asyncio.run(serve_stdio(user=user))

    def resolve_user(self, username: str | None) -> Any:
        if not username:
            return AnonymousUser()
        model = get_user_model()
        try:
            user = model._default_manager.get_by_natural_key(username)
        except model.DoesNotExist:
            raise CommandError(f"No user named {username!r}.") from None
        if not user.is_active:
            raise CommandError(f"User {username!r} is not active.")
        return user

    def client_config(self, name: str, username: str | None) -> dict[str, Any]:
        """What Claude Desktop, Cursor and others put under ``mcpServers`` to start this command."""
        script = Path(sys.argv[0]).resolve()
        if script.name == "manage.py":
            args = [str(script), "mcp_stdio"]
        else:
            args = ["-m", "django", "mcp_stdio"]
        if username:
            args += ["--user", username]
        env = {"DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", ""),
               "PYTHONPATH": str(Path.cwd())}
        return {"mcpServers": {name: {"command": sys.executable, "args": args, "env": env}}}
