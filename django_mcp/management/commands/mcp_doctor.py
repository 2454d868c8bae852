"""``manage.py mcp_doctor URL``: check a deployed MCP endpoint from outside, as clients connect to it."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    """Walks a deployed endpoint as MCP clients do, printing what each would see and the fix for each failure."""

    help = ("Check the MCP endpoint at URL from outside, step by step, as Claude, ChatGPT, Cursor and VS Code "
            "connect to it: HTTPS and redirects, Host and Origin, the 401 challenge, the protected-resource and "
            "authorization-server metadata, PKCE, client ID metadata documents (with --client-id-url, fetched by the "
            "doctor and by the server), registration (a throwaway client, deleted afterwards), CORS, "
            "both eras' handshakes, the Server Card, the 2024-11-05 HTTP+SSE transport, unbuffered event streams and, with --token, an authenticated call. Prints what "
            "a client would see and the fix for each failure; exits with 1 when a check fails.")
    # The project's own configuration plays no part: the doctor judges the deployment by its answers.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url", help="The endpoint as clients are given it, e.g. https://mcp.example.com/mcp.")
        parser.add_argument("--token", help="A bearer token for the endpoint, to check an authenticated call and "
                                            "the handshakes of a protected endpoint.")
        parser.add_argument("--origin", help="The origin of a browser-based client (e.g. http://localhost:6274, the "
                                             "MCP Inspector's), for the Origin and CORS checks.")
        parser.add_argument("--progress-tool", help="A tool that reports progress while it runs, to check that events "
                                                    "reach clients as they are sent (not buffered by a proxy).")
        parser.add_argument("--progress-arguments", default="{}",
                            help="The progress tool's arguments as a JSON object; it should run a second or more.")
        parser.add_argument("--client-id-url", help="A client ID metadata document URL, e.g. the one your MCP client "
                                                    "publishes: the doctor reads it, then asks the authorization "
                                                    "server to fetch and accept it.")
        parser.add_argument("--sse-url", help="The 2024-11-05 HTTP+SSE transport's stream URL (e.g. "
                                              "https://mcp.example.com/sse), when no Server Card names it.")
        parser.add_argument("--timeout", type=float, default=10.0, help="Seconds to wait for each answer (default 10).")
        parser.add_argument("--no-register", action="store_true",
                            help="Do not try dynamic client registration (no throwaway client is created).")
        parser.add_argument("--json", action="store_true", help="Print the findings as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        from django_mcp.doctor.checkup import diagnose
        from django_mcp.doctor.findings import FAIL
        from django_mcp.doctor.report import as_json, as_text
        from django_mcp.doctor.visit import Visit

        try:
            arguments = json.loads(options["progress_arguments"])
        except ValueError as error:
            raise CommandError(f"--progress-arguments is not JSON: {error}") from None
        if not isinstance(arguments, dict):
            raise CommandError("--progress-arguments must be a JSON object, such as '{\"steps\": 5}'.")
        url = options["url"]
        if not url.startswith(("http://", "https://")):
            raise CommandError(f"{url!r} is not an http:// or https:// URL.")
        visit = Visit(url, token=options["token"], origin=options["origin"], timeout=options["timeout"],
                      register=not options["no_register"], progress_tool=options["progress_tool"],
                      progress_arguments=arguments, client_id_url=options["client_id_url"],
                      sse_url=options["sse_url"])
        findings = diagnose(visit)
        self.stdout.write(as_json(url, findings) if options["json"] else as_text(url, findings))
        failures = [finding for finding in findings if finding.status == FAIL]
        if failures:
            raise CommandError(f"{len(failures)} check(s) failed: "
                               + ", ".join(f"{f.check} ({f.fault})" if f.fault else f.check for f in failures),
                               returncode=1)
