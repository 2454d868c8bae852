"""
What django_mcp's commands share: the user and the site a command names (``--user``, ``--site``),
and for ``mcp_list`` and ``mcp_call`` a :class:`~django_mcp.test.McpClient` of the project's own
endpoint, speaking the revision asked for, as that user (or anonymous).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from django_mcp.protocol.versions import ALL_VERSIONS, LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION

ERAS = {"modern": LATEST_MODERN_VERSION, "legacy": LATEST_LEGACY_VERSION}


def add_client_arguments(parser: CommandParser) -> None:
    parser.add_argument("--user", help="Username to act as (default: anonymous), as an MCP client signed in as them.")
    parser.add_argument("--site", help="Import path of an McpSite to serve instead of the project's endpoint "
                                       '(default: what the project serves at DJANGO_MCP["MCP_PATH"]).')
    parser.add_argument("--era", default="modern",
                        help="The revision to speak: modern (2026-07-28, the default), legacy (2025-11-25, a "
                             "session), or a revision such as 2025-06-18.")


def protocol_version(era: str) -> str:
    version = ERAS.get(era, era)
    if version not in ALL_VERSIONS:
        raise CommandError(f"Unknown --era {era!r}: use modern, legacy or one of {', '.join(ALL_VERSIONS)}.")
    return version


def resolve_user(username: str | None, *, active: bool = True) -> Any:
    """The user named ``username`` (an active one, unless ``active`` is False); None for no name."""
    if not username:
        return None
    model = get_user_model()
    try:
        user = model._default_manager.get_by_natural_key(username)
    except model.DoesNotExist:
        raise CommandError(f"No user named {username!r}.") from None
    if active and not user.is_active:
        raise CommandError(f"User {username!r} is not active.")
    return user


def allowed_host() -> str:
    """
    A ``Host`` the project accepts (the endpoint checks it against ``ALLOWED_HOSTS``, as Django
    does): its first named host, else ``localhost``, which Django allows in development.
    """
    from django.conf import settings

    for host in settings.ALLOWED_HOSTS:
        if host and host != "*" and "*" not in host:
            return "example" + host if host.startswith(".") else host
    return "localhost"


def resolve_site(path: str | None) -> Any:
    """The site ``--site`` names; without it, the one the project serves."""
    from django.utils.module_loading import import_string

    from django_mcp.sites import McpSite, get_default_site

    if not path:
        return get_default_site()
    try:
        value = import_string(path)
    except ImportError as error:
        raise CommandError(f"Cannot import {path!r}: {error}") from None
    if isinstance(value, type) and issubclass(value, McpSite):
        value = value()
    if not isinstance(value, McpSite):
        raise CommandError(f"{path!r} is {value!r}, not an McpSite.")
    return value


def client_for(options: dict[str, Any], **client_options: Any) -> Any:
    """A client of the project's endpoint (or of ``--site``) as ``--user``, speaking ``--era``."""
    from django_mcp.test import McpClient

    if options.get("site"):
        client_options["site"] = resolve_site(options["site"])
    client = McpClient(protocol_version(options["era"]), host=allowed_host(), **client_options)
    user = resolve_user(options["user"])
    if user is not None:
        client.force_authenticate(user)
    return client


def stdio_entry(username: str | None) -> dict[str, Any]:
    """
    A server the client starts itself: ``python -m django_mcp.stdio`` with this interpreter, the
    settings module and the project's directory in its environment (``--user`` when given).
    """
    import os
    import sys

    from django_mcp.projects import project_dir

    args = ["-m", "django_mcp.stdio", *(["--user", username] if username else [])]
    env = {"DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", ""), "PYTHONPATH": str(project_dir())}
    return {"command": sys.executable, "args": args, "env": env}
