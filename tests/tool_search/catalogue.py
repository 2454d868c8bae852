"""
A generated catalogue of tools, as a large project has them (500 by default: 25 kinds of record
times 20 things to do with each), for the tests and the benchmark of tool search. Each tool has a
name, a title, a description and arguments written from its record and verb, so searches by
meaning have a right answer; the payroll and audit tools need ``auth.view_user``, and
:class:`Switches` turns tools off as the tool admin's switch does.
"""

from __future__ import annotations

from typing import Any

from django_mcp.hooks import Hook
from django_mcp.permissions import HasPermission
from django_mcp.tools import Tool

RECORDS = {
    "book": "a book in the library's catalogue (title, author, shelf)",
    "loan": "a loan of a book to a member, with its due date",
    "member": "a library member and their contact details",
    "author": "an author of books in the catalogue",
    "invoice": "an invoice sent to a customer, with its lines and total",
    "customer": "a customer account and its billing address",
    "order": "a customer's order of products",
    "shipment": "a parcel shipped for an order, with its tracking number",
    "product": "a product in the shop, with its price and stock",
    "supplier": "a supplier who delivers products",
    "ticket": "a support ticket opened by a customer",
    "employee": "an employee of the company and their department",
    "payroll": "a monthly payroll run with salaries",
    "timesheet": "hours an employee logged against a project",
    "project": "a project with its budget and deadline",
    "meeting": "a meeting in the shared calendar",
    "room": "a meeting room that can be booked",
    "vehicle": "a vehicle of the company fleet and its mileage",
    "contract": "a signed contract with its renewal date",
    "document": "a document in the archive",
    "newsletter": "a newsletter sent to subscribers by email",
    "campaign": "a marketing campaign and its results",
    "warehouse": "a warehouse location and what it stores",
    "audit_log": "an audit log entry of who changed what",
    "webhook": "a webhook endpoint that receives events",
}
VERBS = {
    "list": ("List", "List {records}, newest first, optionally filtered.", {"page": "integer"}),
    "get": ("Show", "Show one {record} by its id, with every field.", {"id": "integer"}),
    "create": ("Create", "Create a new {record}.", {"fields": "object"}),
    "update": ("Update", "Change fields of an existing {record}.", {"id": "integer", "fields": "object"}),
    "delete": ("Delete", "Delete a {record} for good.", {"id": "integer"}),
    "archive": ("Archive", "Archive a {record} so it no longer shows in lists.", {"id": "integer"}),
    "restore": ("Restore", "Bring back an archived {record}.", {"id": "integer"}),
    "export": ("Export", "Export {records} to a CSV spreadsheet between two dates.",
               {"start_date": "string", "end_date": "string"}),
    "import": ("Import", "Import {records} from an uploaded CSV file.", {"file_url": "string"}),
    "approve": ("Approve", "Approve a pending {record}.", {"id": "integer", "comment": "string"}),
    "reject": ("Reject", "Reject a pending {record}, giving a reason.", {"id": "integer", "reason": "string"}),
    "assign": ("Assign", "Assign a {record} to a person responsible for it.", {"id": "integer", "assignee": "string"}),
    "count": ("Count", "Count {records} matching a filter.", {"filter": "object"}),
    "search": ("Search", "Search {records} by keywords in their text.", {"query": "string"}),
    "summarize": ("Summarize", "Summarize the {records} of a period in a short report.", {"period": "string"}),
    "notify": ("Notify about", "Email the people who follow a {record} about a change.", {"id": "integer",
                                                                                          "message": "string"}),
    "schedule": ("Schedule", "Schedule a {record} for a later date.", {"id": "integer", "when": "string"}),
    "cancel": ("Cancel", "Cancel a scheduled {record}.", {"id": "integer"}),
    "duplicate": ("Duplicate", "Make a copy of a {record}.", {"id": "integer"}),
    "merge": ("Merge", "Merge two duplicate {records} into one.", {"id": "integer", "other_id": "integer"}),
}
RESTRICTED = {"payroll", "audit_log"}  # their tools need auth.view_user


def plural(record: str) -> str:
    return record[:-1] + "ies" if record.endswith("y") and record[-2] not in "aeiou" else record + "s"


def definitions(count: int = 500) -> list[dict[str, Any]]:
    """``count`` tool specifications: name, title, description, input schema, whether restricted."""
    made = []
    for record, about in RECORDS.items():
        words = record.replace("_", " ")
        for verb, (title, text, arguments) in VERBS.items():
            name = f"{verb}_{plural(record) if verb in ('list', 'export', 'import', 'count', 'search', 'merge') else record}"
            made.append({
                "name": name,
                "title": f"{title} {words}",
                "description": text.format(record=words, records=plural(words)) + f" A {words} is {about}.",
                "input_schema": {"type": "object", "properties": {
                    argument: {"type": kind, "description": f"The {argument.replace('_', ' ')}."}
                    for argument, kind in arguments.items()}},
                "restricted": record in RESTRICTED,
            })
    return made[:count]


class CatalogueTool(Tool):
    """A generated tool: it answers with its name and the arguments it was given."""

    async def call(self, **arguments: Any) -> str:
        return f"{self.name} ran with {sorted(arguments)}"


def make_tools(count: int = 500) -> list[Tool]:
    """The catalogue's tools, ready for ``site.add``."""
    tools = []
    for spec in definitions(count):
        options = {"name": spec["name"], "title": spec["title"], "description": spec["description"],
                   "input_schema": spec["input_schema"], "annotations": {"readOnlyHint": spec["name"].split("_")[0] in (
                       "list", "get", "export", "count", "search", "summarize")}}
        if spec["restricted"]:
            options["permission_classes"] = [HasPermission("auth.view_user")]
        tools.append(type(f"Tool_{spec['name']}", (CatalogueTool,), options)())
    return tools


class Switches(Hook):
    """Tools switched off by name, as the tool admin's switch does: hidden from everyone."""

    kinds = {"tool"}

    def __init__(self) -> None:
        self.off: set[str] = set()

    async def allows(self, site: Any, primitive: Any, ctx: Any) -> bool:
        return primitive.key not in self.off
