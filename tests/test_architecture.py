"""The import graph of the whole ``django_mcp`` package (docs/import_contracts.md).

Two checks, both over every import grimp finds: at module level, inside functions and under
``if TYPE_CHECKING:`` (a module that needs another only for its types still needs it):

1. import-linter's contracts, ``[tool.importlinter]`` in pyproject.toml, run as ``lint-imports``;
2. no import cycle between modules, a ratchet: the modules in today's cycles are listed in
   ``KNOWN_CYCLE_MODULES``; a module outside the list in a cycle fails, and so does a listed module
   that is no longer in any cycle, so the list only shrinks until it is empty.

The last tests break a throw-away copy of the package on purpose and check that both checks fail
on it: CI (``.ci/run`` runs ``scripts/test``, which runs these) goes red when a contract is broken.

Run as a script, ``python tests/test_architecture.py`` runs check 2 on the ``django_mcp`` found
first on ``sys.path`` (the copy, with ``PYTHONPATH`` pointing at it) and exits 1 on a problem.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "django_mcp"

# The modules in an import cycle today, counting imports inside functions and under TYPE_CHECKING.
# Only ever remove names: test_known_cycle_modules_are_still_in_a_cycle fails when one of these is
# no longer in any cycle (take it out), test_no_module_outside_the_known_cycles_is_in_one when a
# module not listed here joins a cycle (break that cycle; do not add it here).
KNOWN_CYCLE_MODULES: frozenset[str] = frozenset()


# --- the cycle check (grimp) ---------------------------------------------------------------------


def build_graph() -> grimp.ImportGraph:
    """The graph of ``django_mcp`` as found on sys.path, every import counted, no cache written."""
    return grimp.build_graph(
        PACKAGE, include_external_packages=False, exclude_type_checking_imports=False, cache_dir=None
    )


def import_cycles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The strongly connected components of the module graph with more than one module (Tarjan's
    algorithm, iterative), largest first."""
    modules = sorted(graph.modules)
    imports = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in modules}
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []
    for root in modules:
        if root in index:
            continue
        index[root] = lowlink[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work: list[tuple[str, Iterable[str]]] = [(root, iter(imports[root]))]
        while work:
            module, successors = work[-1]
            for imported in successors:
                if imported not in index:
                    index[imported] = lowlink[imported] = len(index)
                    stack.append(imported)
                    on_stack.add(imported)
                    work.append((imported, iter(imports.get(imported, ()))))
                    break
                if imported in on_stack:
                    lowlink[module] = min(lowlink[module], index[imported])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    lowlink[parent] = min(lowlink[parent], lowlink[module])
                if lowlink[module] == index[module]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        components.append(frozenset(component))
    return sorted(components, key=lambda component: (-len(component), sorted(component)))


def example_cycle(graph: grimp.ImportGraph, module: str, cycle: frozenset[str]) -> list[str]:
    """One closed chain of imports through ``module`` inside ``cycle``, a line per import."""
    for imported in sorted(graph.find_modules_directly_imported_by(module) & cycle):
        back = graph.find_shortest_chain(importer=imported, imported=module)
        if back:
            chain = (module, *back)
            break
    else:  # not reached for a member of a strongly connected component
        return [f"(no chain found through {module})"]
    lines = []
    for importer, imported in pairwise(chain):
        details = graph.get_import_details(importer=importer, imported=imported)
        where = ", ".join(f"l.{detail['line_number']}" for detail in details)
        lines.append(f"{importer} -> {imported}" + (f" ({where})" if where else ""))
    return lines


def new_cycle_problems(graph: grimp.ImportGraph, known: frozenset[str]) -> list[str]:
    """A message per import cycle that has a module outside ``known`` in it."""
    problems = []
    for cycle in import_cycles(graph):
        new = sorted(cycle - known)
        if not new:
            continue
        members = "\n".join(f"    {member}{'   (new)' if member in new else ''}" for member in sorted(cycle))
        chain = "\n".join(f"    {line}" for line in example_cycle(graph, new[0], cycle))
        problems.append(
            f"An import cycle of {len(cycle)} modules has {len(new)} module(s) that were in no cycle"
            f" before:\n{members}\n  for example:\n{chain}"
        )
    if problems:
        problems.append(
            "Break the cycle rather than adding modules to KNOWN_CYCLE_MODULES: move what both sides"
            " need into a module below them, or pass it in. Imports inside functions and under"
            " `if TYPE_CHECKING:` count (docs/import_contracts.md)."
        )
    return problems


def stale_known_problems(graph: grimp.ImportGraph, known: frozenset[str]) -> list[str]:
    """A message if a module in ``known`` is no longer in any import cycle."""
    in_cycles = frozenset().union(*import_cycles(graph))
    gone = sorted(known - in_cycles)
    if not gone:
        return []
    names = "\n".join(f"    {module!r}," for module in gone)
    return [
        (
            f"{len(gone)} module(s) in KNOWN_CYCLE_MODULES are no longer in any import cycle. Well done:"
            f" remove them from KNOWN_CYCLE_MODULES in tests/test_architecture.py (the list only"
            f" shrinks):\n{names}"
        )
    ]


# --- import-linter ---------------------------------------------------------------------------------


def contracts() -> list[dict]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["tool"]["importlinter"]["contracts"]


def lint_imports_command() -> list[str]:
    script = Path(sys.executable).with_name("lint-imports")
    if not script.exists():
        found = shutil.which("lint-imports")
        assert found, "lint-imports not found: install the test extra (pip install -e '.[test]')"
        script = Path(found)
    return [str(script), "--no-cache", "--no-logo"]


def run_in(directory: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` in ``directory``, with only ``directory`` on PYTHONPATH: the ``django_mcp``
    there (the checkout's or a copy's) is the one analysed."""
    env = {**os.environ, "PYTHONPATH": str(directory), "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}
    return subprocess.run(command, check=False, cwd=directory, env=env, capture_output=True, text=True, timeout=120)


def report(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"


# --- the checks on the checkout -------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return build_graph()


def test_import_contracts_are_kept() -> None:
    result = run_in(ROOT, lint_imports_command())
    assert result.returncode == 0, (
        "An import contract in pyproject.toml [tool.importlinter] is broken (docs/import_contracts.md);"
        " import-linter's report:\n" + report(result)
    )
    for contract in contracts():
        assert f"{contract['name']} KEPT" in result.stdout, report(result)


def test_every_module_is_core_or_a_feature_app(graph: grimp.ImportGraph) -> None:
    """
    A new module must be placed: in the core's list of the contract that keeps feature apps out
    of it, or in a feature app that the independence contract names. A module in neither would be
    free to import any feature app unnoticed.
    """
    by_id = {contract["id"]: contract for contract in contracts()}
    core = by_id["core-imports-no-feature"]["source_modules"]
    features = by_id["feature-apps-independent"]["modules"]
    placed = [*core, *features]
    unplaced = sorted(module for module in graph.modules if module != PACKAGE and not any(
        module == owner or module.startswith(owner + ".") for owner in placed))
    assert not unplaced, ("Modules neither in the core's list (contract core-imports-no-feature) nor in a feature "
                          f"app (contract feature-apps-independent), pyproject.toml: {unplaced}")


def test_no_module_outside_the_known_cycles_is_in_one(graph: grimp.ImportGraph) -> None:
    problems = new_cycle_problems(graph, KNOWN_CYCLE_MODULES)
    assert not problems, "\n\n".join(problems)


def test_known_cycle_modules_are_still_in_a_cycle(graph: grimp.ImportGraph) -> None:
    problems = stale_known_problems(graph, KNOWN_CYCLE_MODULES)
    assert not problems, "\n\n".join(problems)


# --- the ratchet's logic on a made-up graph ---------------------------------------------------------


def made_up_graph(*imports: str) -> grimp.ImportGraph:
    made_up = grimp.ImportGraph()
    for line in imports:
        importer, imported = line.split(" -> ")
        made_up.add_module(importer)
        made_up.add_module(imported)
        made_up.add_import(importer=importer, imported=imported, line_number=1, line_contents="import x")
    return made_up


def test_the_ratchet_reports_new_cycles_and_stale_names() -> None:
    made_up = made_up_graph("p.a -> p.b", "p.b -> p.a", "p.c -> p.d", "p.d -> p.e", "p.e -> p.c", "p.e -> p.f")
    assert import_cycles(made_up) == [frozenset({"p.c", "p.d", "p.e"}), frozenset({"p.a", "p.b"})]

    assert new_cycle_problems(made_up, frozenset({"p.a", "p.b", "p.c", "p.d", "p.e"})) == []
    [problem, advice] = new_cycle_problems(made_up, frozenset({"p.a", "p.b", "p.c"}))
    assert "p.d   (new)" in problem and "p.e   (new)" in problem and "p.c   (new)" not in problem
    assert "p.d -> p.e (l.1)\n    p.e -> p.c (l.1)\n    p.c -> p.d (l.1)" in problem
    assert "KNOWN_CYCLE_MODULES" in advice

    assert stale_known_problems(made_up, frozenset({"p.a", "p.b"})) == []
    [stale] = stale_known_problems(made_up, frozenset({"p.a", "p.b", "p.f", "p.gone"}))
    assert "'p.f'," in stale and "'p.gone'," in stale and "'p.a'" not in stale


# --- a contract broken on purpose fails -------------------------------------------------------------


def copy_of_the_package(destination: Path, probes: dict[str, str]) -> Path:
    """A copy of django_mcp and pyproject.toml in ``destination``, plus the ``probes`` (path inside
    the package: source)."""
    shutil.copytree(ROOT / PACKAGE, destination / PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(ROOT / "pyproject.toml", destination / "pyproject.toml")
    for path, source in probes.items():
        (destination / PACKAGE / path).write_text(textwrap.dedent(source))
    return destination


CONTRACT_PROBES = {
    # A plain module-level import of Django in the protocol.
    "protocol/_probe_django.py": "import django\n",
    # An import inside a function counts too.
    "protocol/_probe_lazy.py": """\
        def later():
            import channels.layers
        """,
    # So does an import only for type checking.
    "protocol/_probe_types.py": """\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from django_mcp import stores
        """,
    "stores/_probe_up.py": "import django_mcp.transports\n",
    "transports/_probe_admin.py": "import django_mcp.admin\n",
    "transports/_probe_ping.py": "from . import _probe_pong\n",
    "transports/_probe_pong.py": "from . import _probe_ping\n",
}

# contract id -> what its report must name
EXPECTED_BREAKS = {
    "protocol-no-django": [
        "django_mcp.protocol._probe_django -> django (l.1)",
        "django_mcp.protocol._probe_lazy -> channels (l.2)",
    ],
    "protocol-stands-alone": ["django_mcp.protocol._probe_types -> django_mcp.stores (l.4)"],
    "stores-below-transports": ["django_mcp.stores._probe_up -> django_mcp.transports (l.1)"],
    "layers": [
        "django_mcp.protocol._probe_types -> django_mcp.stores (l.4)",
        "django_mcp.stores._probe_up -> django_mcp.transports (l.1)",
    ],
    "serving-code-imports-no-admin": ["django_mcp.transports._probe_admin -> django_mcp.admin (l.1)"],
    "acyclic-transports": ["._probe_p"],
}


def test_a_contract_broken_on_purpose_fails(tmp_path: Path) -> None:
    copy = copy_of_the_package(tmp_path, CONTRACT_PROBES)
    result = run_in(copy, lint_imports_command())
    assert result.returncode == 1, report(result)
    by_id = {contract["id"]: contract["name"] for contract in contracts()}
    for contract_id, mentions in EXPECTED_BREAKS.items():
        name = by_id[contract_id]
        assert f"{name} BROKEN" in result.stdout, f"{contract_id} not broken:\n{report(result)}"
        section = broken_section(result.stdout, name, by_id.values())
        for mention in mentions:
            assert mention in section, f"{contract_id}: {mention!r} not reported:\n{report(result)}"


def broken_section(output: str, name: str, names: Iterable[str]) -> str:
    """The part of lint-imports' report about the broken contract ``name``: from its underlined
    heading to the next contract's."""

    def heading(contract_name: str) -> str:
        return f"\n{contract_name}\n{'-' * len(contract_name)}\n"

    start = output.index(heading(name))
    ends = [output.find(heading(other), start + 1) for other in names if other != name]
    return output[start : min([end for end in ends if end != -1], default=len(output))]


CYCLE_PROBES = {
    # A new two-module cycle: one side imports inside a function, the other only for type checking.
    "_probe_ping.py": """\
        def later():
            from django_mcp import _probe_pong
        """,
    "_probe_pong.py": """\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from django_mcp import _probe_ping
        """,
}


def test_a_new_import_cycle_fails(tmp_path: Path) -> None:
    copy = copy_of_the_package(tmp_path, CYCLE_PROBES)
    result = run_in(copy, [sys.executable, str(Path(__file__).resolve())])
    assert result.returncode == 1, report(result)
    assert "django_mcp._probe_ping   (new)\n    django_mcp._probe_pong   (new)" in result.stdout, report(result)
    assert "django_mcp._probe_ping -> django_mcp._probe_pong (l.2)" in result.stdout, report(result)
    assert "django_mcp._probe_pong -> django_mcp._probe_ping (l.4)" in result.stdout, report(result)


def main() -> int:
    """The cycle check on the ``django_mcp`` first on sys.path; exit 1 with the problems."""
    graph = build_graph()
    problems = new_cycle_problems(graph, KNOWN_CYCLE_MODULES) + stale_known_problems(graph, KNOWN_CYCLE_MODULES)
    print("\n\n".join(problems) if problems else f"{PACKAGE}: no import cycle outside KNOWN_CYCLE_MODULES")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
