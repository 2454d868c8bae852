"""``django_mcp.lint`` and ``manage.py mcp_check``: what makes tools fail in MCP clients."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.management import call_command
from django.core.management.base import CommandError
from pydantic import BaseModel

from django_mcp.lint import RULES, Finding, lint_site
from django_mcp.prompts.base import Prompt
from django_mcp.sites import McpSite
from django_mcp.sources import PrimitiveSource
from django_mcp.tools.base import Tool
from tests.live import ROOT, migrate, server_env


# Permission callables and sync hooks run through database_sync_to_async, which checks connections.
pytestmark = pytest.mark.django_db

READ_ONLY = {"readOnlyHint": True}
SERVER = "srv"


def add(site: McpSite, name: str = "thing", doc: str | None = "Do a thing.", **options: Any) -> Tool:
    """Register a small tool; read-only and described unless told otherwise."""

    def thing(query: str = "") -> str:
        return query

    thing.__doc__ = doc
    options.setdefault("annotations", READ_ONLY)
    return site.add_tool(thing, name=name, **options)


class Handwritten(Tool):
    """A tool whose schemas are written by hand."""

    annotations = READ_ONLY
    input_schema = {"type": "object"}

    def call(self, **arguments: Any) -> str:
        """Do a thing."""  # add_tool(Handwritten, **options) subclasses it, and a class docstring is not inherited
        return "ok"


def handwritten(input_schema: dict | None = None, output_schema: dict | None = None):
    def register(site: McpSite) -> None:
        site.add_tool(Handwritten, input_schema=input_schema or {"type": "object"}, output_schema=output_schema)

    return register


class BookOut(BaseModel):
    title: str
    year: int


def clean(site: McpSite) -> McpSite:
    """Tools, resources and prompts with nothing for a client to object to."""

    def search(query: str, limit: int = 10) -> BookOut:
        """Find a book by words of its title."""

    def lend(book_id: int) -> str:
        """Lend a book."""

    def about() -> str:
        """What the library holds."""

    def book(book_id: str) -> str:
        """One book of the catalogue."""

    def recommend(author: str) -> str:
        """Ask for a reading recommendation."""

    site.add_tool(search, annotations=READ_ONLY, title="Search books")
    site.add_tool(lend, annotations={"readOnlyHint": False, "destructiveHint": False}, title="Lend a book")
    site.add_resource(about, "library://about")
    site.add_resource(book, "library://books/{book_id}")
    site.add_prompt(recommend)
    return site


def lint(site: McpSite, **kwargs: Any) -> list[Finding]:
    return lint_site(site, server_name=SERVER, **kwargs)


def test_a_clean_site_has_no_findings():
    assert lint(clean(McpSite())) == []


def _nested_argument(site: McpSite) -> None:
    def shelve(book: BookOut) -> str:
        """Put a book on the shelf."""

    site.add_tool(shelve, annotations={"readOnlyHint": False, "destructiveHint": False})


class Broken(Tool):
    """A tool whose definition cannot be built."""

    annotations = READ_ONLY

    def get_annotations(self, ctx):
        raise RuntimeError("needs the database")

    def call(self) -> str:
        return ""


BIG = {"type": "object", "properties": {f"field_{i}": {"type": "string", "description": "x" * 60} for i in range(200)}}

CASES = {
    "mcp.T001": lambda site: add(site, name="search books"),
    "mcp.T002": lambda site: add(site, name="books.search"),
    "mcp.T003": lambda site: add(site, name="x" * 60),  # 63 with "srv": short enough for T002
    "mcp.T004": lambda site: [add(site, name=f"tool_{i}") for i in range(41)],
    "mcp.A001": lambda site: add(site, annotations=None),
    "mcp.A002": lambda site: add(site, annotations={"readOnlyHint": False}),
    "mcp.D001": lambda site: add(site, doc=None),
    "mcp.D003": lambda site: add(site, doc="Search. " * 140),
    "mcp.D004": lambda site: [add(site, name="a", title="Search"), add(site, name="b", title="Search")],
    "mcp.S001": handwritten({"type": "array", "items": {"type": "string"}}),
    "mcp.S002": handwritten({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                             "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
    "mcp.S003": handwritten({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"},
                                                              "b": {"$ref": "https://example.com/b.json"}}}),
    "mcp.S004": _nested_argument,
    "mcp.S005": handwritten(output_schema={"type": "array", "items": {"type": "string"}}),
    "mcp.S006": handwritten({"type": "object", "properties": {"a": {"type": "strnig"}}}),
    "mcp.S008": handwritten(BIG),
    "mcp.L001": lambda site: site.add_tool(Broken),
}


@pytest.mark.parametrize("expected", sorted(CASES))
def test_each_tool_problem_is_found_alone(expected):
    site = McpSite()
    CASES[expected](site)
    findings = lint(site)
    assert {finding.id for finding in findings} == {expected}
    for finding in findings:
        assert finding.severity == RULES[expected][0]
        assert finding.hint == RULES[expected][1]
        # Findings about one tool name it; the tool count concerns the whole site.
        site_wide = expected == "mcp.T004"
        assert (finding.kind, finding.primitive == "site") == ((None, True) if site_wide else ("tool", False))


def test_the_tool_count_is_reported_once_when_everybody_sees_every_tool():
    site = McpSite()
    CASES["mcp.T004"](site)
    [finding] = lint(site, users=[AnonymousUser(), User(username="alice")])  # an unsaved user: no database needed
    assert finding.audience is None and "41 tools are registered" in finding.message


def test_duplicate_titles_name_each_other():
    site = McpSite()
    CASES["mcp.D004"](site)
    messages = {finding.name: finding.message for finding in lint(site)}
    assert "'b'" in messages["a"] and "'a'" in messages["b"]


def test_refs_are_resolved_within_the_schema_only():
    site = McpSite()
    CASES["mcp.S003"](site)
    [finding] = lint(site)
    assert "https://example.com/b.json" in finding.message and "#/$defs/Missing" in finding.message
    fine = {"type": "object", "$defs": {"a~b": {"type": "string"}, "n": {"$anchor": "name", "type": "string"}},
            "properties": {"x": {"$ref": "#/$defs/a~0b"}, "y": {"$ref": "#name"},
                           "z": {"type": "object", "default": {"$ref": "#/nowhere"}}}}
    other = McpSite()
    handwritten(fine)(other)
    assert [finding.id for finding in lint(other)] == ["mcp.S004"]  # resolvable: only the client warning


@pytest.mark.parametrize("kind", ["resource", "resource_template", "prompt"])
def test_undescribed_resources_and_prompts_are_noted(kind):
    def undescribed(item_id: str = "1") -> str:
        return ""

    site = McpSite()
    {"resource": lambda: site.add_resource(undescribed, "x://one"),
     "resource_template": lambda: site.add_resource(undescribed, "x://items/{item_id}"),
     "prompt": lambda: site.add_prompt(undescribed)}[kind]()
    [finding] = lint(site)
    assert (finding.id, finding.severity, finding.kind) == ("mcp.D002", "info", kind)


def test_long_descriptions_of_prompts_are_warned_about():
    class Wordy(Prompt):
        description = "Please " * 200

        def render(self) -> str:
            return ""

    site = McpSite()
    site.add_prompt(Wordy)
    assert [(f.id, f.kind) for f in lint(site)] == [("mcp.D003", "prompt")]


def test_the_registry_is_checked_whoever_may_see_it():
    site = McpSite()
    add(site, name="librarians only", permission=lambda ctx: ctx.user.is_authenticated)
    [finding] = lint(site)
    assert (finding.id, finding.name, finding.audience) == ("mcp.T001", "librarians only", None)
    assert finding.origin and "test_mcp_check.py" in finding.origin


class PerUser(Tool):
    """A tool whose schema depends on who asks."""

    annotations = READ_ONLY

    def get_input_schema(self, ctx):
        return {"type": "array"} if ctx.user.is_authenticated else super().get_input_schema(ctx)

    def call(self) -> str:
        return ""


def test_definitions_are_checked_as_each_user_sees_them():
    site = McpSite()
    site.add_tool(PerUser)
    assert lint(site) == []  # anonymous sees a fine schema
    [finding] = lint(site, users=[AnonymousUser(), User(username="alice")])
    assert (finding.id, finding.kind, finding.audience) == ("mcp.S001", "tool", "user 'alice'")


class ToolRows(PrimitiveSource):
    """Tools that appear at run time, or a source that cannot be read."""

    kind = "tool"

    def __init__(self, tools: list[Tool], error: Exception | None = None) -> None:
        self.tools, self.error = tools, error

    async def candidates(self, ctx, position, limit):
        if self.error is not None:
            raise self.error
        start = position or 0
        batch = self.tools[start:start + limit]
        return [(tool, start + i + 1) for i, tool in enumerate(batch)], start + len(batch) < len(self.tools)

    async def lookup(self, key, ctx):
        return next((tool for tool in self.tools if tool.name == key), None)

    def __repr__(self) -> str:
        return "<ToolRows>"


def test_run_time_sources_are_checked_and_noted():
    def stored() -> str:
        """A tool kept in a table."""

    rows = [Tool.from_function(stored, name=f"stored {i}", annotations=READ_ONLY) for i in range(2)]
    site = clean(McpSite())
    site.add_source(ToolRows(rows))
    findings = lint(site, users=[AnonymousUser(), User(username="alice")])
    notes = [f for f in findings if f.id == "mcp.R001"]
    assert len(notes) == 1 and "2 to anonymous, 2 to user 'alice'" in notes[0].message
    bad_names = sorted((f.name, f.audience, f.origin) for f in findings if f.id == "mcp.T001")
    assert bad_names == [("stored 0", "anonymous", "<ToolRows>"), ("stored 1", "anonymous", "<ToolRows>")]


def test_many_run_time_tools_count_for_the_audience():
    def stored() -> str:
        """A tool kept in a table."""

    site = McpSite()
    site.add_source(ToolRows([Tool.from_function(stored, name=f"row_{i}", annotations=READ_ONLY) for i in range(45)]))
    counts = [f for f in lint(site) if f.id == "mcp.T004"]
    assert [(f.audience, f.message.split(",")[0]) for f in counts] == [("anonymous",
                                                                        "45 tools are listed to anonymous")]


def test_unreadable_run_time_sources_are_a_note_not_an_error():
    site = clean(McpSite())
    site.add_source(ToolRows([], error=RuntimeError("no such table: stored_tools")))
    [finding] = lint(site)
    assert (finding.id, finding.severity) == ("mcp.R002", "info")
    assert "no such table: stored_tools" in finding.message


def test_a_listing_that_raises_is_an_error():
    def refuse(ctx):
        raise RuntimeError("permission backend down")

    site = McpSite()
    add(site, permission=refuse)
    [finding] = lint(site)
    assert (finding.id, finding.severity, finding.audience) == ("mcp.L002", "error", "anonymous")


def test_without_jsonschema_schemas_are_not_validated(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # makes `import jsonschema` raise ImportError
    site = McpSite()
    CASES["mcp.S006"](site)
    assert [(f.id, f.severity, f.kind) for f in lint(site)] == [("mcp.S007", "info", None)]


def test_docs_describe_every_finding():
    docs = (ROOT / "docs" / "lint.md").read_text()
    assert [rule for rule in RULES if f"`{rule}`" not in docs] == []


# The command ---------------------------------------------------------------------------------------

clean_site = clean(McpSite("clean"))
warning_site = McpSite("warnings")
add(warning_site, name="unannotated", annotations=None)
error_site = McpSite("errors")
handwritten({"type": "array"})(error_site)
add(error_site, name="unannotated", annotations=None)

HERE = "tests.management.test_mcp_check"


def run(*args: str) -> tuple[str, CommandError | None]:
    out = StringIO()
    try:
        call_command("mcp_check", *args, stdout=out)
    except CommandError as error:
        return out.getvalue(), error
    return out.getvalue(), None


def test_text_output_groups_findings_by_primitive():
    out, error = run("--site", f"{HERE}.error_site", "--server-name", SERVER)
    assert error is not None and error.returncode == 1 and "1 finding at level error" in str(error)
    handwritten_part, unannotated_part = out.split("tool 'unannotated'")
    assert handwritten_part.startswith("tool 'handwritten'") and "ERROR   mcp.S001" in handwritten_part
    assert "test_mcp_check.py" in handwritten_part.splitlines()[0]  # where the tool is defined
    assert "WARNING mcp.A001" in unannotated_part and "hint: Set annotations=" in unannotated_part
    assert out.rstrip().endswith("1 error, 1 warning, 0 info.")


def test_json_output_is_a_list_of_findings():
    out, error = run("--site", f"{HERE}.warning_site", "--format", "json", "--server-name", SERVER)
    assert error is None  # a warning is below the default fail level
    [finding] = json.loads(out)
    assert finding == {"id": "mcp.A001", "severity": "warning", "message": finding["message"],
                       "hint": RULES["mcp.A001"][1], "kind": "tool", "name": "unannotated", "audience": None,
                       "origin": finding["origin"], "primitive": "tool 'unannotated'"}
    out_again, error = run("--site", f"{HERE}.warning_site", "--format", "json", "--fail-level", "warning")
    assert error is not None and error.returncode == 1 and json.loads(out_again)[0]["id"] == "mcp.A001"


def test_a_clean_site_passes_at_any_level():
    out, error = run("--site", f"{HERE}.clean_site", "--fail-level", "warning", "--server-name", SERVER)
    assert error is None and out.strip() == "No problems found."


def test_server_name_joins_the_tool_names():
    out, error = run("--site", f"{HERE}.clean_site", "--format", "json", "--server-name", "s" * 57)
    assert error is None
    assert sorted(f["name"] for f in json.loads(out) if f["id"] == "mcp.T003") == ["lend", "search"]


per_user_site = McpSite("per-user")
per_user_site.add_tool(PerUser)


def test_user_option_checks_what_that_user_is_listed(django_user_model):
    django_user_model.objects.create_user("alice")
    out, error = run("--site", f"{HERE}.per_user_site", "--user", "alice", "--format", "json")
    assert error is not None
    assert [(f["id"], f["audience"]) for f in json.loads(out)] == [("mcp.S001", "user 'alice'")]
    assert "No user named 'bob'" in str(run("--site", f"{HERE}.per_user_site", "--user", "bob")[1])
    assert "not an McpSite" in str(run("--site", "json.dumps")[1])


def test_the_example_project(tmp_path: Path):
    env = {"DJANGO_SETTINGS_MODULE": "example_project.settings", "DEMO_SQLITE": str(tmp_path / "demo.sqlite3")}
    migrate(env)  # so the run-time sources (model rows, stored prompts) can be read
    result = subprocess.run([sys.executable, "manage.py", "mcp_check", "--format", "json"], cwd=ROOT,
                            env=server_env(env), capture_output=True, text=True, timeout=120)
    findings = json.loads(result.stdout)
    assert all(finding["id"] in RULES for finding in findings)
    has_errors = any(finding["severity"] == "error" for finding in findings)
    assert result.returncode == (1 if has_errors else 0), result.stderr
    ids = {finding["id"] for finding in findings}
    assert "mcp.R001" in ids and "mcp.R002" not in ids  # migrated: every run-time source was read
