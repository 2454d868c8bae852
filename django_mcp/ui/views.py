"""
A view: a ``ui://`` resource rendered from a Django template (ext-apps specification, "UI Resource
Format"; SEP-1865).

Hosts may read a view before the tool is called, or in parallel with the call, and cache it
("Lifecycle"): the template renders what the requesting user may see, never one call's arguments or
result, which reach the page over ``postMessage`` (``toolinput``, ``toolresult``). The page must be
self-contained: it lives on the host's sandbox origin, where the server's own URLs, cookies and
``{% static %}`` files are not reachable unless their origin is declared in ``csp``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.template.loader import render_to_string
from django.utils import translation

from ..conf import mcp_settings
from ..context import Context
from ..protocol.context import RequestContext
from ..resources.base import Resource
from .constants import MIME_TYPE, SCHEME
from .security import checked_csp, checked_permissions


logger = logging.getLogger("django_mcp.ui")


class View(Resource):
    """
    A view an MCP Apps host shows beside a tool's result. Options are class attributes::

        class BookCard(View):
            uri = "ui://library/book-card"
            template_name = "library/book_card.html"
            csp = {"resourceDomains": ["https://covers.example.org"]}   # origins the page loads from
            prefers_border = True

    and a tool names it with ``@tool(view=BookCard)`` (or ``view="ui://library/book-card"``). The
    short form ``@tool(view="library/book_card.html")`` makes the view for you, at
    ``ui://<site>/<tool name>``. The template gets ``user``, ``view``, ``tool`` (the tool that
    shows it: its name, title, description and output schema), ``LANGUAGE_CODE``, and the tag
    library ``{% load mcp_apps %}``, whose ``{% mcp_app_script %}`` puts the App SDK's bridge in
    the page.
    """

    options = Resource.options | {"template_name", "csp", "permissions", "domain", "prefers_border", "tool", "site"}

    mime_type = MIME_TYPE
    #: The Django template the page is rendered from.
    template_name: str | None = None
    #: Origins the page may reach: ``connectDomains`` (fetch, WebSocket), ``resourceDomains``
    #: (scripts, styles, images, fonts, media), ``frameDomains``, ``baseUriDomains``. None: none.
    csp: dict[str, list[str]] | None = None
    #: Browser permissions the page would like (``camera``, ``microphone``, ``geolocation``,
    #: ``clipboardWrite``); hosts may grant them or not.
    permissions: Any = None
    #: A dedicated sandbox origin, in the host's own format; leave it out unless a host asks.
    domain: str | None = None
    #: True: the host draws a border and background; False: none; None: the host decides.
    prefers_border: bool | None = None
    #: The tool that shows this view, and its site (set for the views the short form makes): the
    #: view is then for whoever may use the tool.
    tool: Any = None
    site: Any = None

    def __init__(self) -> None:
        super().__init__()
        where = self.origin()
        if not self.template_name:
            raise ImproperlyConfigured(f"{where}: a View needs a template_name")
        # Checked once, at registration: a bad origin fails at import, not in a client's iframe.
        self._ui = {key: value for key, value in (
            ("csp", checked_csp(self.csp, where)),
            ("permissions", checked_permissions(self.permissions, where)),
            ("domain", self.domain),
            ("prefersBorder", self.prefers_border),
        ) if value is not None}

    async def has_permission(self, ctx: Context) -> bool:
        if not await super().has_permission(ctx):
            return False
        # Whatever hides the tool (its permission classes, the tool admin's switches, an app-only
        # tool for a client that did not declare the extension) hides its view: "not found", like
        # any resource.
        return self.tool is None or self.site is None or await self.site.permits(self.tool, ctx)

    def check_address(self) -> None:
        super().check_address()
        if not (self.uri or "").startswith(SCHEME):
            raise ImproperlyConfigured(f"{self.origin()}: a view's uri must start with {SCHEME!r} (got {self.uri!r})")

    def read(self, ctx: Context) -> str:
        """The page, rendered for this request's user, in their language."""
        with translation.override(self.get_language(ctx)):
            return render_to_string(self.template_name, self.get_context_data(ctx))

    def get_language(self, ctx: Context) -> str:
        """
        The language to render in: the user's ``language`` attribute when the user model has one,
        else ``LANGUAGE_CODE`` (as template prompts choose). In the browser the page also gets the
        host's ``locale`` in its host context (ext-apps specification, "Host Context").
        """
        wanted = getattr(ctx.user, "language", None) or settings.LANGUAGE_CODE
        try:
            return translation.get_supported_language_variant(str(wanted))
        except LookupError:
            return settings.LANGUAGE_CODE

    def get_context_data(self, ctx: Context) -> dict[str, Any]:
        """What the template gets; override to add more (what the user may see, never one call's data)."""
        tool = self.tool
        return {
            "user": ctx.user, "view": self, "LANGUAGE_CODE": translation.get_language(),
            "tool": None if tool is None else {
                "name": tool.name, "title": getattr(tool, "title", None), "description": tool.description,
                "output_schema": _output_schema(tool, ctx)},
        }

    def ui_meta(self) -> dict[str, Any]:
        """
        ``_meta.ui`` of the view: its csp (with the project's ``DJANGO_MCP["VIEW_CSP"]`` origins
        added), permissions, domain and border preference.
        """
        ui = dict(self._ui)
        csp = merged_csp(ui.get("csp"), project_csp())
        if csp:
            ui["csp"] = csp
        return ui

    def get_meta(self, ctx: Context) -> dict[str, Any] | None:
        # On the listing entry too, so hosts can review what a view may reach when they connect
        # (ext-apps specification, "Metadata Location").
        meta = dict(super().get_meta(ctx) or {})
        ui = self.ui_meta()
        if ui:
            meta["ui"] = ui
        return meta or None

    def get_cache_hints(self, ctx: Context) -> dict[str, Any] | None:
        return {"cacheScope": "private"}  # rendered for one user

    async def read_contents(self, uri: str, variables: dict[str, str], ctx: RequestContext) -> list[dict[str, Any]]:
        contents = await super().read_contents(uri, variables, ctx)
        ui = self.ui_meta()
        if ui:
            for item in contents:
                item["_meta"] = {**(item.get("_meta") or {}), "ui": ui}
        return contents


def project_csp() -> dict[str, list[str]] | None:
    """
    ``DJANGO_MCP["VIEW_CSP"]``, checked: origins every view may reach (a company's font or image
    host). Not origins: left out, and logged — a view then reaches less, never more (system check
    django_mcp.E008 names it at start-up).
    """
    global _project_csp
    value = mcp_settings.VIEW_CSP
    # Asked for every view of every listing and read: checked once per value of the setting (and a
    # bad one logged once, not per request).
    if _project_csp is None or _project_csp[0] is not value:
        try:
            checked = checked_csp(value, 'DJANGO_MCP["VIEW_CSP"]')
        except ImproperlyConfigured as error:
            logger.error("%s", error)
            checked = None
        _project_csp = (value, checked)
    return _project_csp[1]


_project_csp: tuple[Any, dict[str, list[str]] | None] | None = None


def merged_csp(*lists: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
    """The union of CSP objects, key by key, each origin once and in order."""
    merged: dict[str, list[str]] = {}
    for csp in lists:
        for key, origins in (csp or {}).items():
            known = merged.setdefault(key, [])
            known.extend(origin for origin in origins if origin not in known)
    return merged or None


def _output_schema(tool: Any, ctx: Context) -> Any:
    getter = getattr(tool, "get_output_schema", None)
    try:
        return getter(ctx) if getter is not None else getattr(tool, "output_schema", None)
    except Exception:  # a view renders without the schema rather than not at all
        return None
