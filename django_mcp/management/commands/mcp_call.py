"""``manage.py mcp_call``: call one tool through the project's MCP endpoint and print what comes back."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ._shared import add_client_arguments, client_for


def describe(block: dict[str, Any]) -> str:
    """A line for content that is not text (an image, audio, a resource or a link to one)."""
    what = block.get("mimeType") or block.get("uri") or (block.get("resource") or {}).get("uri", "")
    return f"[{block.get('type')}: {what}]"


class Command(BaseCommand):
    """Calls a tool as a client would, printing its progress and log messages as they come, then the result."""

    help = ("Call TOOL through the project's MCP endpoint as --user (default: anonymous) with --arguments (a JSON "
            "object), printing progress and log messages as they arrive, then the result: its text, and its "
            "structured content as JSON. Exits with 1 when the tool reports an error or the call is refused.")
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tool", help="The tool's name, as tools/list gives it.")
        parser.add_argument("--arguments", default="{}",
                            help='The arguments as a JSON object, e.g. \'{"query": "dune"}\'.')
        add_client_arguments(parser)
        parser.add_argument("--log-level", default="info",
                            help="The least severe log message to print (MCP logging levels; default: info).")
        parser.add_argument("--json", action="store_true", help="Print the whole result as JSON instead.")

    def handle(self, *args: Any, **options: Any) -> None:
        from django_mcp.test import ErrorResponse, UnansweredRequest

        try:
            arguments = json.loads(options["arguments"])
        except ValueError as error:
            raise CommandError(f"--arguments is not JSON: {error}") from None
        if not isinstance(arguments, dict):
            raise CommandError("--arguments must be a JSON object, such as '{\"query\": \"dune\"}'.")
        client = client_for(options, log_level=options["log_level"], on_notification=self.heard)
        try:
            result = client.call_tool(options["tool"], arguments)
        except ErrorResponse as error:
            raise CommandError(f"The call was refused: {error.message} (JSON-RPC error {error.code}, "
                               f"HTTP {error.status})") from None
        except UnansweredRequest as error:
            raise CommandError(f"The tool asked the client something it cannot answer here: {error}") from None
        finally:
            client.close()
        if options["json"]:
            self.stdout.write(json.dumps(result.raw, indent=2, ensure_ascii=False))
        else:
            for block in result.content:
                self.stdout.write(block["text"] if block.get("type") == "text" else describe(block))
            if result.structured is not None:
                self.stdout.write("Structured content:")
                self.stdout.write(json.dumps(result.structured, indent=2, ensure_ascii=False))
        if result.is_error:
            raise CommandError(f"The tool {options['tool']!r} reported an error.")

    def heard(self, message: dict[str, Any]) -> None:
        """A notification of the call, printed as it arrives (to stderr: stdout carries the result)."""
        params = message.get("params") or {}
        if message.get("method") == "notifications/progress":
            total = f"/{params['total']:g}" if params.get("total") is not None else ""
            text = f" {params['message']}" if params.get("message") else ""
            self.stderr.write(f"progress {params.get('progress', 0):g}{total}{text}")
        elif message.get("method") == "notifications/message":
            data = params.get("data")
            self.stderr.write(f"{params.get('level', 'info')}: {data if isinstance(data, str) else json.dumps(data)}")
