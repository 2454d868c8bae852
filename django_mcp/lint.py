"""
What in a site's tools, resources and prompts makes MCP clients refuse or misuse them; most rules
are stricter than the MCP spec, because clients are. Checked: everything registered in code
(the *registry*), then what each *audience* (anonymous, any users given) is listed through the
site's sources and permissions. ``manage.py mcp_check`` prints it; docs/lint.md explains each id.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from asgiref.sync import async_to_sync

from .backend import handle
from .conf import mcp_settings
from .json_schemas import keyword_values, resolves_inline, schema_checker
from .protocol.context import RequestContext
from .protocol.versions import LATEST_LEGACY_VERSION, era_of
from .sources import KINDS, RegisteredPrimitives


SEVERITIES = ("info", "warning", "error")
LABELS = {"tool": "tool", "resource": "resource", "resource_template": "resource template", "prompt": "prompt"}
LIST_METHODS = {"tool": "tools/list", "resource": "resources/list", "resource_template": "resources/templates/list",
                "prompt": "prompts/list"}

SPEC_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")  # MCP spec 2025-11-25, server/tools, "Tool names" (SHOULD)
STRICT_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}")  # what Anthropic's and OpenAI's function calling take
COMBINED_NAME_LIMIT = 60  # server + tool: mcp__<server>__<tool> passes 64 beyond it; Cursor warns past 60
TOOL_COUNT_LIMIT = 40  # Cursor passes at most 40 tools, of all servers together, to its model
DESCRIPTION_LIMIT = 1024  # OpenAI's function calling refuses longer descriptions
SCHEMA_SIZE_LIMIT = 10 * 1024  # bytes of JSON per schema: every listed schema goes to the model every turn
RUN_TIME_LIMIT = 200  # primitives read per run-time source and audience: a table need not be read whole

#: Every finding id: its severity, and the hint printed with it.
RULES: dict[str, tuple[str, str]] = {
    "mcp.T001": ("error", "Rename the tool (name=...) with letters, digits, _ and - only."),
    "mcp.T002": ("warning", "Use letters, digits, _ and - only, 64 characters at most."),
    "mcp.T003": ("warning", "Shorten the tool name or SERVER_NAME; try the name users give it with --server-name."),
    "mcp.T004": ("warning", "Merge tools, hide some from users who do not need them (permission_classes), or turn on "
                            "tool search (django_mcp.tool_search.enable_tool_search)."),
    "mcp.A001": ("warning", 'Set annotations={"readOnlyHint": True}, or "destructiveHint": False if it only adds.'),
    "mcp.A002": ("info", 'Add "destructiveHint": False if the tool only adds or updates.'),
    "mcp.D001": ("warning", "Write a docstring on the function (or on call()), or pass description=..."),
    "mcp.D002": ("info", "Write a docstring, or pass description=..."),
    "mcp.D003": ("warning", "Keep it short; put details in the parameters' descriptions or in a resource."),
    "mcp.D004": ("warning", "Give each a title of its own."),
    "mcp.S001": ("error", "Make the arguments the properties of one object."),
    "mcp.S002": ("error", "Use one object with optional properties; explain the alternatives in descriptions."),
    "mcp.S003": ("error", "Point $ref at $defs of the same schema, or inline the definitions."),
    "mcp.S004": ("warning", "Inline the definitions where the schema stays small enough."),
    "mcp.S005": ("error", "Return an object (a pydantic model, a TypedDict), or set structured_output=False."),
    "mcp.S006": ("error", "Fix the schema: clients that validate schemas refuse the tool."),
    "mcp.S007": ("info", "pip install jsonschema (it is in django_mcp's test extra)."),
    "mcp.S008": ("warning", "Split the tool, or trim descriptions and nested models."),
    "mcp.L001": ("error", "Make the get_* hooks work for any request, or override get_definition()."),
    "mcp.L002": ("error", "A permission check raised: make it answer True or False."),
    "mcp.R001": ("info", "Check again as the users who matter (--user) when the data changes."),
    "mcp.R002": ("info", "Run mcp_check where the database is reachable and migrated."),
}

Issue = tuple[str, str, str, str]  # id, severity, message, hint


def issue(id_: str, message: str) -> Issue:
    severity, hint = RULES[id_]
    return id_, severity, message, hint


@dataclass(frozen=True)
class Finding:
    """
    One problem: an ``id`` of :data:`RULES`, its ``severity`` (error: clients refuse or break; warning:
    some do, or the model is misled; info), the primitive (``kind``; ``name``, a resource's URI; both
    None for the site), the ``audience`` whose listing showed it (None: the registry), its ``origin``.
    """

    id: str
    severity: str
    message: str
    hint: str = ""
    kind: str | None = None
    name: str | None = None
    audience: str | None = None
    origin: str | None = None

    @property
    def level(self) -> int:
        """info 0, warning 1, error 2."""
        return SEVERITIES.index(self.severity)

    @property
    def primitive(self) -> str:
        """``tool 'search_books'``, or ``site``."""
        return "site" if self.kind is None else f"{LABELS[self.kind]} {self.name!r}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "primitive": self.primitive}


def name_issues(name: str, server_name: str) -> list[Issue]:
    issues: list[Issue] = []
    if not SPEC_NAME.fullmatch(name):
        others = ", ".join(map(repr, sorted(set(re.sub(r"[A-Za-z0-9_.\-]", "", name)))))
        why = "is empty" if not name else f"is {len(name)} characters long" if len(name) > 128 else f"has {others}"
        issues.append(issue("mcp.T001", f"The tool name {why}: the MCP spec (2025-11-25, server/tools, \"Tool names\") "
                            "allows 1 to 128 of A-Z a-z 0-9 _ - . and clients refuse or mangle other names."))
    elif not STRICT_NAME.fullmatch(name):
        why = "has a dot" if "." in name else f"is {len(name)} characters long"
        issues.append(issue("mcp.T002", f"The tool name {why}: valid MCP, but clients that pass tools to "
                            "function-calling APIs (names ^[a-zA-Z0-9_-]{1,64}$) reject it."))
    if len(server_name) + len(name) > COMBINED_NAME_LIMIT:
        issues.append(issue("mcp.T003", f"Server name {server_name!r} and tool name are {len(server_name + name)} "
                            f"characters together, over {COMBINED_NAME_LIMIT}: as mcp__<server>__<tool> it passes the "
                            "64 characters model APIs accept, and clients drop the tool."))
    return issues


def annotation_issues(annotations: Any) -> list[Issue]:
    # ToolAnnotations defaults (MCP spec 2025-11-25, server/tools): readOnlyHint false, destructiveHint true.
    annotations = annotations if isinstance(annotations, dict) else {}
    if "readOnlyHint" not in annotations and "destructiveHint" not in annotations:
        return [issue("mcp.A001", "No readOnlyHint or destructiveHint annotation: clients treat the tool as "
                      "destructive, ask the user to confirm each call, or leave it out of read-only modes.")]
    if annotations.get("readOnlyHint") is False and "destructiveHint" not in annotations:
        return [issue("mcp.A002", "readOnlyHint is false and destructiveHint absent, which defaults to true: "
                      "clients take the tool for destructive.")]
    return []


def description_issues(kind: str, definition: dict[str, Any]) -> list[Issue]:
    text = definition.get("description")
    if not isinstance(text, str) or not text.strip():
        if kind == "tool":
            return [issue("mcp.D001", "No description: the model picks tools by their descriptions, and calls an "
                          "undescribed one rarely or wrongly.")]
        return [issue("mcp.D002", f"The {LABELS[kind]} has no description: clients show only its name.")]
    if len(text) > DESCRIPTION_LIMIT:
        return [issue("mcp.D003", f"The description is {len(text)} characters, over {DESCRIPTION_LIMIT}: OpenAI's "
                      "function calling refuses it, and other clients cut it short.")]
    return []


def schema_issues(field: str, schema: Any, check: Callable[[Any], str | None] | None) -> list[Issue]:
    issues: list[Issue] = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        got = f"type {schema.get('type')!r}" if isinstance(schema, dict) else type(schema).__name__
        issues.append(issue("mcp.S001" if field == "inputSchema" else "mcp.S005", f"The {field} is not of type "
                            f"object ({got}): the MCP spec (2025-11-25, server/tools) requires \"type\": \"object\", "
                            "and clients drop or refuse the tool."))
    if not isinstance(schema, dict):
        return issues
    combinators = [keyword for keyword in ("oneOf", "anyOf", "allOf") if keyword in schema]
    if field == "inputSchema" and combinators:
        issues.append(issue("mcp.S002", f"The inputSchema has {', '.join(combinators)} at its top, which "
                            "function-calling APIs (OpenAI's, Anthropic's) refuse, failing the model request."))
    refs = sorted(set(keyword_values(schema, "$ref")))
    broken = [ref for ref in refs if not resolves_inline(schema, ref)]
    if broken:
        issues.append(issue("mcp.S003", f"The {field} has $ref that do not resolve inside it: {', '.join(broken)}."))
    elif refs:
        issues.append(issue("mcp.S004", f"The {field} uses $ref ({', '.join(refs)}): valid, but some clients and "
                            "function-calling APIs do not resolve references, and see an empty schema."))
    if check is not None and (error := check(schema)):
        issues.append(issue("mcp.S006", f"The {field} is not valid JSON Schema: {error}."))
    size = len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False, default=str).encode())
    if size > SCHEMA_SIZE_LIMIT:
        issues.append(issue("mcp.S008", f"The {field} is {size} bytes of JSON, over {SCHEMA_SIZE_LIMIT}: it goes to "
                            "the model on every turn, and some clients truncate or refuse large schemas."))
    return issues


def definition_issues(kind: str, definition: dict[str, Any], server_name: str,
                      check: Callable[[Any], str | None] | None = None) -> list[Issue]:
    """The issues of one ``Tool``, ``Resource``, ``ResourceTemplate`` or ``Prompt`` wire object."""
    issues = description_issues(kind, definition)
    if kind == "tool":
        issues = [*name_issues(str(definition.get("name") or ""), server_name),
                  *annotation_issues(definition.get("annotations")), *issues,
                  *schema_issues("inputSchema", definition.get("inputSchema"), check)]
        if definition.get("outputSchema") is not None:
            issues += schema_issues("outputSchema", definition["outputSchema"], check)
    return issues


def key_of(definition: dict[str, Any]) -> str:
    return str(definition.get("uri") or definition.get("uriTemplate") or definition.get("name") or "")


def title_issues(definitions: list[dict[str, Any]]) -> list[tuple[str, Issue]]:
    """Titles primitives of one kind share: users cannot tell them apart in a client."""
    by_title: dict[str, list[str]] = defaultdict(list)
    for definition in definitions:
        # What clients display (MCP spec 2025-11-25, server/tools): title, else annotations.title.
        title = definition.get("title") or (definition.get("annotations") or {}).get("title")
        if isinstance(title, str) and title.strip():
            by_title[title.strip()].append(key_of(definition))
    return [(key, issue("mcp.D004", f"The title {title!r} is also that of "
                        f"{', '.join(repr(other) for other in keys if other != key)}: users cannot tell them apart."))
            for title, keys in by_title.items() if len(keys) > 1 for key in keys]


class _Linter:
    """Collects findings, each once: a primitive seen in several views is reported where first seen."""

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        self.check = schema_checker()
        self.findings: list[Finding] = []
        self.seen: set[tuple[Any, ...]] = set()
        self.registry: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in KINDS}
        self.run_time: dict[Any, tuple[str, list[str]]] = {}  # source → its kind, what each audience is listed
        # A hook around tools/list (tool search) decides what clients are listed: the tools each
        # audience is actually listed are counted then, not those registered.
        self.listing_hooked = False

    def add(self, issue: Issue, kind: str | None = None, name: str | None = None, audience: str | None = None,
            origin: str | None = None) -> None:
        id_, severity, message, hint = issue
        if (id_, kind, name, message) not in self.seen:
            self.seen.add((id_, kind, name, message))
            self.findings.append(Finding(id_, severity, message, hint, kind, name, audience, origin))

    def definition(self, kind: str, definition: dict[str, Any], audience: str | None, origin: str | None) -> None:
        for found in definition_issues(kind, definition, self.server_name, self.check):
            self.add(found, kind, key_of(definition), audience, origin)

    def listing(self, kind: str, definitions: list[dict[str, Any]], audience: str | None,
                shown: int | None = None) -> None:
        """What concerns a listing as a whole: how many tools (``shown``: as tools/list gives them), and titles shared."""
        count = len(definitions) if shown is None else shown
        # An audience listed as many tools as the registry holds adds nothing to the registry's finding.
        repeated = audience is not None and shown is None and count == len(self.registry[kind])
        if kind == "tool" and count > TOOL_COUNT_LIMIT and not repeated and not (audience is None and
                                                                                   self.listing_hooked):
            whom = "registered" if audience is None else f"listed to {audience}"
            self.add(issue("mcp.T004", f"{count} tools are {whom}, over {TOOL_COUNT_LIMIT}: Cursor passes at most "
                           f"{TOOL_COUNT_LIMIT} tools, of all servers together, to its model; models choose worse "
                           "among many."), audience=audience)
        for key, found in title_issues(definitions):
            self.add(found, kind, key, audience)

    async def build(self, primitive: Any, context: Any, audience: str | None) -> dict[str, Any] | None:
        try:
            return await primitive.get_definition(context)
        except Exception as error:
            self.add(issue("mcp.L001", f"Building the definition raised {type(error).__name__}: {error}; "
                           f"{LIST_METHODS[primitive.kind]} fails for whoever may see it."),
                     primitive.kind, primitive.key, audience, primitive.origin())
            return None

    async def check_registry(self, site: Any) -> None:
        self.listing_hooked = site.lists_through_hooks("tool")
        for kind in KINDS:
            context = listing_context(None, kind)
            for primitive in getattr(site, f"{kind}s"):  # site.tools, .resources, .resource_templates, .prompts
                definition = await self.build(primitive, context, None)
                if definition is not None:
                    self.registry[kind][primitive.key] = definition
                    self.definition(kind, definition, None, primitive.origin())
            self.listing(kind, list(self.registry[kind].values()), None)

    async def check_audience(self, site: Any, user: Any) -> None:
        audience = f"user {user.get_username()!r}" if user is not None and user.is_authenticated else "anonymous"
        for kind in KINDS:
            context, listed = listing_context(user, kind), []
            for source in site.sources(kind):
                in_code = isinstance(source, RegisteredPrimitives)
                try:
                    primitives, more = await _read(site, source, context, None if in_code else RUN_TIME_LIMIT)
                except Exception as error:
                    raised = f"{type(error).__name__}: {error}"
                    if in_code:
                        self.add(issue("mcp.L002", f"Listing the {LABELS[kind]}s for {audience} raised {raised}; "
                                       f"{LIST_METHODS[kind]} fails for them."), audience=audience)
                    else:  # often no database here: worth a note, not a failure
                        self.add(issue("mcp.R002", f"The run-time source {source!r} of {LABELS[kind]}s could not be "
                                       f"read ({raised}); what it lists was not checked."))
                    continue
                if not in_code:
                    self.run_time.setdefault(source, (kind, []))[1].append(
                        f"{len(primitives)}{'+' if more else ''} to {audience}")
                for primitive in primitives:
                    definition = await self.build(primitive, context, audience)
                    if definition is None:
                        continue
                    listed.append(definition)
                    # Unchanged from the registry: checked already. Run-time resources are rows of
                    # data, not definitions somebody wrote: counted only.
                    if definition == self.registry[kind].get(primitive.key) if in_code else kind.startswith("resource"):
                        continue
                    self.definition(kind, definition, audience, primitive.origin() if in_code else repr(source))
            shown = await _listed_count(site, kind, context) if kind == "tool" and self.listing_hooked else None
            self.listing(kind, listed, audience, shown)

    def note_run_time(self) -> None:
        for source, (kind, seen) in self.run_time.items():
            checked = "counted, not checked (rows are data)" if kind.startswith("resource") else "checked"
            self.add(issue("mcp.R001", f"The run-time source {source!r} lists {LABELS[kind]}s ({', '.join(seen)}), "
                           f"{checked}; what it lists may change without a deploy."))


def listing_context(user: Any, kind: str, protocol_version: str = LATEST_LEGACY_VERSION) -> Any:
    """
    The :class:`~django_mcp.Context` of a ``*/list`` request for ``kind`` by ``user`` (None:
    anonymous) in ``protocol_version``: what the checks of this module and the contracts snapshot
    (:mod:`django_mcp.contracts`) build definitions with, outside any request.
    """
    from django.contrib.auth.models import AnonymousUser  # here: importing it needs the app registry

    return handle(RequestContext(era=era_of(protocol_version), protocol_version=protocol_version,
                                 user=user or AnonymousUser(), method=LIST_METHODS[kind]))


async def _read(site: Any, source: Any, context: Any, limit: int | None) -> tuple[list[Any], bool]:
    """What ``source`` lists that this request may see, at most ``limit``, and whether more was left."""
    found: list[Any] = []
    position = None
    while limit is None or len(found) < limit:
        batch, more = await source.candidates(context, position, 100)
        # Each candidate comes with the position after it: the last one starts the next batch.
        for primitive, position in batch:
            if await site.permits(primitive, context):
                found.append(primitive)
        if not more or not batch:
            return found, False
    return found[:limit], True


async def _listed_count(site: Any, kind: str, context: Any) -> int | None:
    """How many entries ``tools/list`` (every page, through the hooks) gives ``context``'s user; None if it fails."""
    count, cursor = 0, None
    try:
        while True:
            page = await site.listing(kind, cursor, context.request)
            count += len(page.items)
            cursor = page.next_cursor
            if not cursor:
                return count
    except Exception:  # reported as the listing's own failure (mcp.L002) where it matters
        return None


async def alint_site(site: Any, server_name: str | None = None, users: Iterable[Any] | None = None) -> list[Finding]:
    """:func:`lint_site` for async callers."""
    linter = _Linter(server_name or mcp_settings.SERVER_NAME)
    if linter.check is None:
        linter.add(issue("mcp.S007", "jsonschema is not installed, so schemas were not validated (mcp.S006)."))
    await linter.check_registry(site)
    for user in users if users is not None else [None]:
        await linter.check_audience(site, user)
    linter.note_run_time()
    return linter.findings


def lint_site(site: Any, server_name: str | None = None, users: Iterable[Any] | None = None) -> list[Finding]:
    """The findings of ``site``, registry first, then as each of ``users`` (default: anonymous)."""
    return async_to_sync(alint_site)(site, server_name, users)

