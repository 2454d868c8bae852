"""Report what makes a site's tools, resources and prompts fail in MCP clients (django_mcp.lint)."""

import json
import os
from collections import defaultdict
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.management.base import BaseCommand, CommandError

from django_mcp.lint import SEVERITIES, Finding, lint_site

from ._shared import resolve_site, resolve_user


def format_text(findings: list[Finding]) -> str:
    """Findings grouped by primitive, the site's own first, the most severe first in each group."""
    groups: dict[str, list[Finding]] = defaultdict(list)
    for finding in sorted(findings, key=lambda f: f.kind is not None):
        groups[finding.primitive].append(finding)
    lines = []
    for primitive, members in groups.items():
        origin = next((f.origin for f in members if f.origin), None)
        lines.append(primitive + (f"  ({origin})" if origin else ""))
        for finding in sorted(members, key=lambda f: (-f.level, f.id)):
            whom = f" (as {finding.audience})" if finding.audience else ""
            lines += [f"  {finding.severity.upper():7} {finding.id}{whom}: {finding.message}",
                      f"          hint: {finding.hint}"]
        lines.append("")
    counts = {severity: sum(f.severity == severity for f in findings) for severity in reversed(SEVERITIES)}
    summary = ", ".join(f"{n} {severity}{'s' if n != 1 and severity != 'info' else ''}"
                        for severity, n in counts.items())
    lines.append(f"{summary}." if findings else "No problems found.")
    return "\n".join(lines)


class Command(BaseCommand):
    """``manage.py mcp_check``: :func:`django_mcp.lint.lint_site` on the command line."""

    help = ("Check the site's tools, resources and prompts for what MCP clients refuse or misuse: names, schemas, "
            "annotations, descriptions, tool counts. Everything registered in code is checked, then what an "
            "anonymous user (and --user) is listed. Exits with 1 when findings at --fail-level or above exist.")
    # The findings are the point: an unrelated system check error must not hide them
    # (`manage.py check` reports those).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--site", help='Import path of the McpSite to check (default: DJANGO_MCP["SITE"]).')
        parser.add_argument("--user", help="Also check what this user (by username) is listed.")
        parser.add_argument("--server-name",
                            help='The server name clients join with tool names (default: DJANGO_MCP["SERVER_NAME"]).')
        parser.add_argument("--format", choices=["text", "json"], default="text", help="Output format.")
        parser.add_argument("--fail-level", choices=["error", "warning"], default="error",
                            help="Exit with status 1 when findings of this severity or higher exist (default: error).")

    def handle(self, *args: Any, **options: Any) -> None:
        site = resolve_site(options["site"])
        users = [AnonymousUser()]
        if options["user"]:
            users.append(resolve_user(options["user"], active=False))
        findings = lint_site(site, server_name=options["server_name"], users=users)
        if options["format"] == "json":
            self.stdout.write(json.dumps([finding.as_dict() for finding in findings], indent=2))
        else:
            text = format_text(findings)
            # Paths relative to where the command runs are shorter, and what an editor opened there expects.
            self.stdout.write(text.replace(os.getcwd() + os.sep, ""))
        threshold = SEVERITIES.index(options["fail_level"])
        failing = sum(finding.level >= threshold for finding in findings)
        if failing:
            raise CommandError(f"{failing} finding{'s' if failing != 1 else ''} at level {options['fail_level']} "
                               "or above.", returncode=1)
