"""``manage.py mcp_contracts``: write, or check, the snapshot of what the sites offer MCP clients."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    """Like ``makemigrations`` and ``makemigrations --check``, for the tools, resources and prompts clients see."""

    help = ("Write the snapshot of every site's tools, resources, resource templates and prompts (names, schemas, "
            "annotations, required scopes) to the contracts file, as makemigrations writes migrations; with "
            "--check, write nothing and exit with 1 when what is served differs, naming each change as breaking "
            "(a tool removed or renamed, a required argument added, a type narrowed, an output field removed) "
            "or compatible.")
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true",
                            help="Compare with the snapshot instead of writing it; exit with 1 on any change.")
        parser.add_argument("--breaking-only", action="store_true",
                            help="With --check: exit with 1 only for breaking changes (compatible ones are listed).")
        parser.add_argument("--path", help='The snapshot file (default: DJANGO_MCP["CONTRACTS_FILE"], else '
                                           "mcp_contracts.json beside manage.py).")

    def handle(self, *args: Any, **options: Any) -> None:
        from django_mcp.contract_changes import compare
        from django_mcp.contracts import ContractsError, contracts_path, dumps, load, snapshot

        path = Path(options["path"]) if options["path"] else contracts_path()
        served = snapshot()
        if not options["check"]:
            previous = None
            if path.exists():
                try:
                    previous = load(path)
                except ContractsError:
                    previous = None
            path.write_text(dumps(served), encoding="utf-8")
            changes = compare(previous, served) if previous is not None else []
            counted = {key: sum(len((site.get(key) or {})) for site in served["sites"].values())
                       for key in ("tools", "resources", "resourceTemplates", "prompts")}
            self.stdout.write(f"Wrote {path}: {counted['tools']} tools, {counted['resources']} resources, "
                              f"{counted['resourceTemplates']} resource templates, {counted['prompts']} prompts.")
            for change in changes:
                self.stdout.write(f"  {change}")
            return
        try:
            committed = load(path)
        except ContractsError as error:
            raise CommandError(str(error)) from None
        changes = compare(committed, served)
        if not changes:
            self.stdout.write(f"No changes: what the sites serve matches {path}.")
            return
        for change in changes:
            self.stdout.write(str(change))
        breaking = sum(change.breaking for change in changes)
        summary = f"{len(changes)} change(s) from {path.name}, {breaking} breaking."
        if breaking or not options["breaking_only"]:
            raise CommandError(summary + " Run manage.py mcp_contracts to accept them.")
        self.stdout.write(summary)
