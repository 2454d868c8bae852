"""``manage.py mcp_list``: what a user's MCP client is offered — tools, resources, templates, prompts."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ._shared import add_client_arguments, client_for

METHOD_NOT_FOUND = -32601
# Rows of each section shown without --all: a catalogue published as resources has hundreds.
SHOWN = 25
HINTS = (("readOnlyHint", "read-only"), ("destructiveHint", "destructive"), ("idempotentHint", "idempotent"),
         ("openWorldHint", "open-world"))


def hints(tool: dict[str, Any]) -> str:
    annotations = tool.get("annotations") or {}
    return ", ".join(label for key, label in HINTS if annotations.get(key))


def first_line(text: str | None, width: int = 70) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


class Command(BaseCommand):
    """Lists what the project's MCP endpoint offers a user, through the same requests a client sends."""

    help = ("List the tools (with their annotations), resources, resource templates and prompts the project's MCP "
            "endpoint offers --user (default: anonymous), through the endpoint itself as a client would see them; "
            "tools registered in code that the user is not offered are named too.")
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        add_client_arguments(parser)
        parser.add_argument("--format", choices=["text", "json"], default="text", help="Output format.")
        parser.add_argument("--all", action="store_true",
                            help=f"Show every resource (text output shows the first {SHOWN} of each list otherwise).")

    def handle(self, *args: Any, **options: Any) -> None:
        from django_mcp.test import ErrorResponse

        from ._shared import resolve_site

        client = client_for(options)

        def offered(listing: Any) -> list[dict[str, Any]]:
            try:
                return listing()
            except ErrorResponse as error:
                if error.code == METHOD_NOT_FOUND:  # the server has none of this kind to offer
                    return []
                raise CommandError(f"The endpoint refused: {error}") from None

        try:
            tools = offered(client.list_tools)
            listed = {"tools": tools, "resources": offered(client.list_resources),
                      "resourceTemplates": offered(client.list_resource_templates),
                      "prompts": offered(client.list_prompts)}
        finally:
            client.close()
        names = {tool["name"] for tool in tools}
        site = resolve_site(options["site"])
        hidden = sorted(tool.name for tool in site.tools if tool.name not in names)
        # A hook around tools/list (tool search) lists fewer tools than the user may call.
        searched = site.lists_through_hooks("tool")
        if options["format"] == "json":
            self.stdout.write(json.dumps({**{key: list(value) for key, value in listed.items()},
                                          "notListed": hidden}, indent=2))
            return
        who = options["user"] or "an anonymous user"
        self.stdout.write(f"What {who} is offered ({client.protocol_version}):")
        self.everything = options["all"]
        self.section("Tools", [(tool["name"], hints(tool), first_line(tool.get("description"))) for tool in tools])
        if hidden and searched:
            self.stdout.write(f"  Not listed to {who}: found through tool search, or hidden by a permission, a scope or "
                              "the tool admin's switch: " + ", ".join(hidden))
        elif hidden:
            self.stdout.write(f"  Not offered to {who} (a permission, a scope, or switched off in the tool admin): "
                              + ", ".join(hidden))
        self.section("Resources", [(item["uri"], item.get("mimeType", ""), item.get("name", ""))
                                   for item in listed["resources"]])
        self.section("Resource templates", [(item["uriTemplate"], item.get("mimeType", ""), item.get("name", ""))
                                            for item in listed["resourceTemplates"]])
        self.section("Prompts", [(item["name"], " ".join(argument["name"] for argument in item.get("arguments") or []),
                                  first_line(item.get("description"))) for item in listed["prompts"]])

    def section(self, title: str, rows: list[tuple[str, str, str]]) -> None:
        self.stdout.write(f"\n{title} ({len(rows)})")
        shown = rows if self.everything else rows[:SHOWN]
        width = max((len(row[0]) for row in shown), default=0)
        middle = max((len(row[1]) for row in shown), default=0)
        for first, second, third in shown:
            self.stdout.write(f"  {first:<{width}}  {second:<{middle}}  {third}".rstrip())
        if len(shown) < len(rows):
            self.stdout.write(f"  … and {len(rows) - len(shown)} more (--all shows them)")
