"""Serve MCP on stdin/stdout, for clients that start the server as a subprocess."""

import asyncio
import json
import os
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.management.base import BaseCommand

from django_mcp.stdio import is_redirected, protocol_output, redirect_stdout
from django_mcp.transports.stdio import serve_stdio

from ._shared import resolve_user, stdio_entry


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
            config = json.dumps(self.client_config(options["name"], username), indent=2)
            if is_redirected():
                # Launched from a command line: fd 1 already points at stderr (django_mcp.stdio),
                # and the configuration is the one thing meant for the real stdout.
                protocol_output().write(config.encode() + b"\n")
                protocol_output().flush()
            else:
                self.stdout.write(config)
            return
        user = self.resolve_user(username)
        # From here on stdout carries MCP messages only (MCP spec 2025-11-25, basic/transports#stdio).
        # Usually done already, before the apps were imported (django_mcp.stdio); this covers
        # call_command() and other launchers. Idempotent.
        redirect_stdout()
        asyncio.run(serve_stdio(user=user))

    def resolve_user(self, username: str | None) -> Any:
        return resolve_user(username) or AnonymousUser()

    def client_config(self, name: str, username: str | None) -> dict[str, Any]:
        """
        What Claude Desktop, Cursor and others put under ``mcpServers`` to start the server: the
        ``python -m django_mcp.stdio`` launcher, which keeps stdout clean from before Django starts
        (docs/stdio.md), with the settings module and the project directory in its environment.
        """
        return {"mcpServers": {name: stdio_entry(username)}}
