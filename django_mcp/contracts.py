"""
Tool contracts: a committed snapshot of what every site offers clients — its tools, resources,
resource templates and prompts as they are listed, with their schemas, annotations and required
scopes — and the changes between that snapshot and what the code serves now, each classed as
breaking or compatible (:mod:`django_mcp.contract_changes`). ``manage.py mcp_contracts`` writes it
and checks it, as ``makemigrations`` and ``makemigrations --check`` do for models; system check
``django_mcp.W010`` warns when it is stale.

The snapshot holds what code registers (``site.tools`` and the other registries, model resources'
tools included), each as an anonymous client's listing builds it, whoever may see it: what staff
add at run time (query tools, prompts in the database) is data, and what a permission hides from
one user is still the tool's contract with the others.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conf import mcp_settings

#: The snapshot's format; a file of another version is refused, not misread.
FORMAT = 1
DEFAULT_FILE = "mcp_contracts.json"
# The registry of each kind, and the key its items are filed under in the snapshot.
KINDS = (("tool", "tools"), ("resource", "resources"), ("resource_template", "resourceTemplates"),
         ("prompt", "prompts"))


def contracts_path() -> Path:
    """
    Where the snapshot lives: ``DJANGO_MCP["CONTRACTS_FILE"]``, else ``mcp_contracts.json`` in the
    project's directory (the one holding the settings module's package, where ``manage.py`` is).
    """
    configured = mcp_settings.CONTRACTS_FILE
    if configured:
        return Path(configured)
    from .projects import project_dir

    return project_dir() / DEFAULT_FILE


async def asnapshot(sites: list[Any] | None = None) -> dict[str, Any]:
    """What every site (default: the default site and every other made in this process) offers now."""
    from .sites import all_sites

    chosen = sites if sites is not None else all_sites()
    return {"format": FORMAT, "sites": {site.name: await _site_snapshot(site) for site in chosen}}


def snapshot(sites: list[Any] | None = None) -> dict[str, Any]:
    """:func:`asnapshot` for sync callers (the command, the system check)."""
    from asgiref.sync import async_to_sync

    return async_to_sync(asnapshot)(sites)


async def _site_snapshot(site: Any) -> dict[str, Any]:
    from .lint import listing_context
    from .protocol.versions import LATEST_MODERN_VERSION

    found: dict[str, Any] = {}
    for kind, key in KINDS:
        context = listing_context(None, kind, LATEST_MODERN_VERSION)
        entries = {}
        for primitive in getattr(site, f"{kind}s"):  # site.tools, .resources, .resource_templates, .prompts
            entry = await primitive.get_definition(context)
            entry = {name: value for name, value in entry.items() if name != "_meta"}  # per-response metadata
            scopes = sorted(primitive.get_required_scopes(context))
            if scopes:
                entry["requiredScopes"] = scopes
            entries[primitive.key] = entry
        found[key] = dict(sorted(entries.items()))
    return found


def dumps(contracts: dict[str, Any]) -> str:
    """The snapshot as committed: sorted keys, two-space indents, a final newline (stable diffs)."""
    return json.dumps(contracts, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class ContractsError(Exception):
    """The snapshot file cannot be read: missing, not JSON, or of another format."""


def load(path: Path | None = None) -> dict[str, Any]:
    """The committed snapshot at ``path`` (default :func:`contracts_path`); :class:`ContractsError` if unreadable."""
    path = path or contracts_path()
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContractsError(f"{path} does not exist: run manage.py mcp_contracts to write it.") from None
    except ValueError as error:
        raise ContractsError(f"{path} is not JSON ({error}).") from None
    if not isinstance(loaded, dict) or loaded.get("format") != FORMAT:
        raise ContractsError(f"{path} is not an MCP contracts file of format {FORMAT}.")
    return loaded


__all__ = ["ContractsError", "asnapshot", "contracts_path", "dumps", "load", "snapshot"]
