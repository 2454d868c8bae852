"""``manage.py mcp_server_json``: the MCP Registry's ``server.json`` (or the Server Card) of the project's site."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_mcp.server_card.card import NAME_PATTERN, ServerCard, public_base_url
from django_mcp.server_card.registry import pypi_package, repository, server_json

from ._shared import resolve_site


class Command(BaseCommand):
    """Writes the registry's ``server.json`` for the site, built from the same card ``/mcp/server-card`` serves."""

    help = ("Write the MCP Registry's server.json for the project's MCP site (what `mcp-publisher publish` sends to "
            "registry.modelcontextprotocol.io), or with --card the site's Server Card (SEP-2127 draft), to stdout or "
            '--output. The remote URLs come from --base-url, else DJANGO_MCP["PUBLIC_BASE_URL"].')
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", help="Write to this file instead of stdout.")
        parser.add_argument("--card", action="store_true",
                            help="Write the Server Card (as /mcp/server-card serves it) instead of server.json, e.g. "
                                 "to host it as a static file.")
        parser.add_argument("--base-url", help="The public scheme and host clients reach the server at, such as "
                                               'https://mcp.example.com (default: DJANGO_MCP["PUBLIC_BASE_URL"]).')
        parser.add_argument("--name", help="The reverse-DNS name to publish under, such as com.example/library "
                                           "(default: SERVER_NAME when it is one, else the base URL's host reversed, "
                                           "a slash and SERVER_NAME).")
        parser.add_argument("--site", help="Import path of an McpSite to describe (default: DJANGO_MCP[\"SITE\"]).")
        parser.add_argument("--endpoint", help="The site's Streamable HTTP endpoint path (default: "
                                               'DJANGO_MCP["MCP_PATH"], with the HTTP+SSE endpoint beside it).')
        parser.add_argument("--repository-url", help="The source repository, such as https://github.com/acme/library.")
        parser.add_argument("--repository-source", help="Its forge (default: github or gitlab, from the URL).")
        parser.add_argument("--repository-subfolder", help="The project's folder inside the repository.")
        parser.add_argument("--pypi-package", metavar="NAME",
                            help="Also list a PyPI package clients can run over stdio with uvx (its README must "
                                 "contain 'mcp-name: <name>' for the official registry).")
        parser.add_argument("--package-version", help="The package's version (default: the server's version).")
        parser.add_argument("--no-remotes", action="store_true",
                            help="Leave the remote endpoints out (a package-only server.json).")

    def handle(self, *args: Any, **options: Any) -> None:
        base_url = (options["base_url"] or public_base_url() or "").rstrip("/")
        if not options["no_remotes"] and not base_url:
            raise CommandError('No public URL: pass --base-url https://… or set DJANGO_MCP["PUBLIC_BASE_URL"] '
                               "(or --no-remotes for a package-only server.json).")
        parts = urlsplit(base_url)
        if base_url and (parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/")):
            raise CommandError(f"--base-url must be a scheme and host such as https://mcp.example.com, not {base_url!r}.")
        name = options["name"]
        if name is not None and not NAME_PATTERN.match(name):
            raise CommandError(f"--name {name!r} is not a reverse-DNS name with one slash, such as com.example/library.")
        card_options: dict[str, Any] = {"site": resolve_site(options["site"]), "name": name,
                                        "endpoint": options["endpoint"]}
        if options["repository_url"]:
            card_options["repository"] = repository(options["repository_url"], source=options["repository_source"],
                                                    subfolder=options["repository_subfolder"])
        card = ServerCard(**card_options).as_dict(base_url or "https://localhost")
        if options["card"]:
            document = card
        else:
            packages = []
            if options["pypi_package"]:
                packages.append(pypi_package(options["pypi_package"], options["package_version"] or card["version"]))
            document = server_json(card, packages=packages, remotes=not options["no_remotes"])
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            if options["verbosity"] > 0:
                self.stderr.write(f"Wrote {options['output']} ({document['name']} {document['version']}).")
        else:
            self.stdout.write(text, ending="")
