"""
The ``commands-reference`` directive: the management commands of django_mcp and its installed
feature apps, from each command's ``help`` and its argparse parser, so the reference lists exactly
the options ``manage.py <command> --help`` does (less Django's own, common to every command).
"""

from __future__ import annotations

import argparse
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from rst_text import indent, inline

# Options BaseCommand adds to every command: documented by Django, not here.
DJANGO_OPTIONS = {"help", "version", "verbosity", "settings", "pythonpath", "traceback", "no_color", "force_color",
                  "skip_checks"}


def django_mcp_commands() -> list[tuple[str, str, Any]]:
    """(app label, command name, Command instance) for every command of a django_mcp app."""
    from django.apps import apps
    from django.core.management import find_commands, load_command_class

    found = []
    for config in apps.get_app_configs():
        if config.name == "django_mcp" or config.name.startswith("django_mcp."):
            for name in sorted(find_commands(f"{config.path}/management")):
                found.append((config.name, name, load_command_class(config.name, name)))
    return sorted(found, key=lambda item: item[1])


def _option_text(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(action.option_strings)
        if action.nargs == 0:
            return names
        metavar = action.metavar or (f"{{{','.join(action.choices)}}}" if action.choices else action.dest.upper())
        return f"{names} {metavar}"
    return action.metavar or action.dest


def _options(program: str, parser: argparse.ArgumentParser) -> list[str]:
    blocks = [f".. program:: {program}"]
    subcommands: list[str] = []
    for action in parser._actions:
        if action.dest in DJANGO_OPTIONS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                subcommands.append(f"``{program} {name}``: {inline(helps.get(name) or '')}")
                subcommands.extend(_options(f"{program} {name}", sub))
            continue
        text = inline(action.help or "")
        mentioned = "default" in (action.help or "").lower()
        if action.default not in (None, argparse.SUPPRESS, False) and action.nargs != 0 and not mentioned:
            text += f" Default: ``{action.default}``."
        if action.required and action.option_strings:
            text += " Required."
        blocks.append(f".. option:: {_option_text(action)}\n\n" + indent(text or "(no help)"))
    return blocks + subcommands


class CommandsReference(SphinxDirective):
    """One section per command: its help, then its options."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        blocks = []
        for app, name, command in django_mcp_commands():
            self.env.note_dependency(__import__(type(command).__module__, fromlist=["*"]).__file__)
            parser = command.create_parser("manage.py", name)
            title = f"``{name}``"
            blocks.append(f".. _command-{name}:\n\n{title}\n{'-' * len(title)}")
            blocks.append(inline(command.help) + f"\n\nFrom ``{app}``; run it as ``python manage.py {name}``.")
            blocks.extend(_options(f"manage.py {name}", parser))
        return self.parse_text_to_nodes("\n\n".join(blocks), allow_section_headings=True)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("commands-reference", CommandsReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
