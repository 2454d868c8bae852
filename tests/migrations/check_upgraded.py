"""
Find every row of an inventory (made by ``fill_old_layout.py`` on the old layout) again in a
database upgraded with the current checkout's ``migrate``.

Run by ``test_upgrade_from_old_layout.py`` as ``python -P check_upgraded.py ROOT INVENTORY.json``
with ``PYTHONPATH=ROOT`` (the current checkout), cwd ``ROOT``. Knows nothing of where models live:
each model of the inventory is found by its class name among ``apps.get_models()``, must be found
in exactly one app, and must hold the same number of rows and the same rows (by the inventory's
lookups) as before the upgrade. Prints a JSON report on stdout: per model where it lived, where
it lives now (app label, table), its counts and its problems. Exit status 1 when any model has a
problem, 3 when the wrong tree was imported.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any


def load_shared():  # type: ignore[no-untyped-def]
    path = Path(__file__).resolve().with_name("upgrade_rows.py")
    spec = importlib.util.spec_from_file_location("upgrade_rows", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shared = load_shared()


def uninstalled_app_packages() -> list[str]:
    """Packages of django_mcp with an ``apps.py`` whose app is not in INSTALLED_APPS (a hint for a lost model)."""
    from django.apps import apps

    import django_mcp

    root = Path(django_mcp.__file__).resolve().parent
    packages = []
    for apps_py in sorted(root.rglob("apps.py")):
        dotted = ".".join(("django_mcp", *apps_py.parent.relative_to(root).parts))
        if not apps.is_installed(dotted):
            packages.append(dotted)
    return packages


def table_rows(table: str) -> int | None:
    """Rows in ``table`` by raw SQL, or None when there is no such table."""
    from django.db import connection

    if table not in connection.introspection.table_names():
        return None
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
        return cursor.fetchone()[0]


def check_model(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    from django.apps import apps
    from django.core.exceptions import FieldError
    from django.db import DatabaseError

    was = f"{entry['app_label']}.{name} (table {entry['db_table']})"
    result: dict[str, Any] = {"was": was, "now": None, "db_table": None, "expected_count": entry["count"],
                              "count": None, "problems": []}
    found = [model for model in apps.get_models() if model.__name__ == name]
    if not found:
        left = table_rows(entry["db_table"])
        hint = (f"; its old table {entry['db_table']} still exists with {left} row(s)" if left is not None
                else f"; its old table {entry['db_table']} is gone")
        uninstalled = uninstalled_app_packages()
        if uninstalled:
            hint += f"; apps of django_mcp not in INSTALLED_APPS of the current settings: {', '.join(uninstalled)}"
        result["problems"].append(
            f"{name}, which was {was}, is not a model of any installed app: its app is not installed in the "
            f"current settings, or the model was renamed or deleted{hint}")
        return result
    if len(found) > 1:
        result["problems"].append(f"{name} is a model of more than one app: "
                                  f"{', '.join(model._meta.label for model in found)}")
        return result
    model = found[0]
    result["now"], result["db_table"] = model._meta.label, model._meta.db_table
    result["m2m_tables"] = sorted(field.remote_field.through._meta.db_table
                                  for field in model._meta.local_many_to_many)
    try:
        result["count"] = model._base_manager.count()
        rows = shared.read_rows(model, entry["lookups"])
    except (DatabaseError, FieldError) as exc:
        # A table the state points at but the database lacks, a field gone: the rows are lost to the ORM.
        # (Autocommit: a failed statement leaves PostgreSQL's connection usable for the next model.)
        result["problems"].append(f"reading {model._meta.label} (table {model._meta.db_table}) failed: "
                                  f"{type(exc).__name__}: {exc}")
        return result
    if result["count"] != entry["count"]:
        result["problems"].append(f"{result['count']} row(s) now, {entry['count']} before the upgrade")
    result["problems"].extend(shared.compare_rows(entry["rows"], rows))
    return result


def check_permissions(held: dict[str, list[str]]) -> dict[str, list[str]]:
    """
    Problems per user: each "ModelClass.codename" it held before must still be granted as the admin
    asks for it now, ``user.has_perm("<current app label>.<codename>")``.
    """
    from django.apps import apps
    from django.contrib.auth import get_user_model

    problems: dict[str, list[str]] = {}
    for username, names in held.items():
        user = get_user_model()._base_manager.get(username=username)
        for name in names:
            class_name, codename = name.split(".", 1)
            found = [model for model in apps.get_models() if model.__name__ == class_name]
            if len(found) != 1:
                problems.setdefault(username, []).append(f"{name}: {class_name} is not one installed model")
            elif not user.has_perm(f"{found[0]._meta.app_label}.{codename}"):
                problems.setdefault(username, []).append(
                    f"{name}: lost; user.has_perm({found[0]._meta.app_label + '.' + codename!r}) is False (does the "
                    f"group's or user's permission still point at the content type of the old app?)")
    return problems


def main() -> None:
    root, inventory_path = Path(sys.argv[1]), Path(sys.argv[2])
    import django

    django.setup()
    origins = shared.module_origins(root)
    inventory = json.loads(inventory_path.read_text())
    report = {"origins": origins, "models": {name: check_model(name, entry)
                                             for name, entry in inventory["models"].items()},
              "permissions": check_permissions(inventory.get("permissions", {}))}
    json.dump(report, sys.stdout, indent=1)
    failed = any(result["problems"] for result in report["models"].values()) or report["permissions"]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
