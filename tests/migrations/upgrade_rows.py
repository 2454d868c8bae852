"""
What the fill script (old layout) and the check script (current checkout) of
``test_upgrade_from_old_layout.py`` share: how a model's rows are read and compared.

Loaded by file path (``load_shared()`` in each script), never imported through ``sys.path``: the
fill script runs with the *old* tree first on ``PYTHONPATH`` and must not pick up anything of the
current checkout except this file, which imports nothing of the project.

A model's rows are described by *lookups*: field names or ``__`` paths (``user__username``,
``permissions__codename``), as ``values_list()`` takes them. The inventory keeps, per model, its
class name, where it lived (app label, table), its row count and the rows as ``values_list(*lookups)``
normalised to JSON, so the check finds them again whatever app the model lives in now.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any


def normalise(value: Any) -> Any:
    """A value of ``values_list()`` as JSON, the same on SQLite and PostgreSQL for one database."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).hex()
    return value


def row_key(row: tuple[Any, ...]) -> str:
    """One row as a canonical JSON string (dict keys sorted), so rows compare as strings."""
    return json.dumps([normalise(value) for value in row], sort_keys=True, default=str)


def read_rows(model: Any, lookups: list[str]) -> list[str]:
    """Every row of ``model`` (its base manager: no default filtering) as sorted row keys."""
    return sorted(row_key(row) for row in model._base_manager.values_list(*lookups))


def describe(model: Any, lookups: list[str]) -> dict[str, Any]:
    """A model's inventory entry: where it lives, how many rows it has, and the rows."""
    meta = model._meta
    m2m_tables = sorted(field.remote_field.through._meta.db_table for field in meta.local_many_to_many)
    return {
        "app_label": meta.app_label,
        "db_table": meta.db_table,
        "m2m_tables": m2m_tables,
        "count": model._base_manager.count(),
        "lookups": list(lookups),
        "rows": read_rows(model, lookups),
    }


def compare_rows(expected: list[str], actual: list[str], limit: int = 5) -> list[str]:
    """Problems (missing or unexpected rows, as multisets), at most ``limit`` of each kind shown."""
    missing = list((Counter(expected) - Counter(actual)).elements())
    extra = list((Counter(actual) - Counter(expected)).elements())
    problems = []
    if missing:
        problems.append(f"{len(missing)} row(s) of the inventory not found, e.g. {missing[:limit]}")
    if extra:
        problems.append(f"{len(extra)} row(s) not in the inventory, e.g. {extra[:limit]}")
    return problems


def module_origins(under: str | os.PathLike[str]) -> dict[str, str]:
    """
    Where ``django_mcp`` and the settings module were imported from; exits the script with status 3
    if either is not under ``under`` (the tree the half of the test is meant to run).
    """
    import importlib

    import django_mcp

    settings_module = importlib.import_module(os.environ["DJANGO_SETTINGS_MODULE"])
    origins = {"django_mcp": str(Path(django_mcp.__file__).resolve()),
               "settings": str(Path(settings_module.__file__).resolve())}
    root = Path(under).resolve()
    wrong = {name: path for name, path in origins.items() if not Path(path).is_relative_to(root)}
    if wrong:
        print(f"imported from the wrong tree (expected under {root}): {wrong}; sys.path={sys.path}", file=sys.stderr)
        sys.exit(3)
    return origins
