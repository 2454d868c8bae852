"""
Django admin actions as tools, opt-in per action (docs/admin_actions.md)::

    class VolumeAdmin(McpActionsMixin, admin.ModelAdmin):
        mcp_actions = ["mark_out_of_print", "delete_selected"]

    register_admin_actions(Volume)  # or admin_site=..., actions=[...], site=...

Each becomes a tool ``<model_name>_<action>`` taking ``ids`` and/or ``filter``, run as the
changelist runs it for the MCP user; it answers the action's messages (MCP spec 2025-11-25,
server/tools, "Structured Content"), and refusals as ``isError`` results ("Error Handling").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from django.contrib.admin import ModelAdmin, site as default_admin_site
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.admin.utils import model_format_dict
from django.contrib.auth.models import AnonymousUser
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import FieldError, ImproperlyConfigured, PermissionDenied, ValidationError
from django.db import router, transaction
from django.http import HttpResponseBase, QueryDict
from django.urls import NoReverseMatch, reverse
from django.utils.html import strip_tags

from ..context import Context
from ..exceptions import ToolError
from ..primitives import as_class_attributes
from ..protocol.context import RequestContext
from ..threads import in_thread
from ..tools.base import Tool
from ..tools.http_requests import build_request
from ..tools.results import InvalidArguments
from .selection import CollectedMessages, action_parts, filter_targets, value_schema


#: Options ``admin_action_tools`` passes on to every tool it makes.
TOOL_OPTIONS = frozenset({"permission_classes", "permission", "meta", "icons", "max_selection", "log_changes"})
SCALARS = (str, int, float, bool, type(None))


class McpActionsMixin:
    """
    For a ``ModelAdmin``: the actions ``site.register_admin_actions(Model)`` publishes as tools, by
    name (``"delete_selected"``, the admin's methods, its site's actions) or ``"__all__"``; None: none.
    """

    mcp_actions: Iterable[str] | str | None = None

    def get_mcp_actions(self) -> list[str]:
        """The names of the actions to publish (asked once, at registration); ``__all__``: the site's, then its own."""
        if self.mcp_actions != "__all__":
            return [self.mcp_actions] if isinstance(self.mcp_actions, str) else list(self.mcp_actions or ())
        names = [name for name, _ in self.admin_site.actions]  # type: ignore[attr-defined]
        found = (self.get_action(item) for item in self.actions or ())  # type: ignore[attr-defined]
        named = (action_parts(action)[1] for action in found if action is not None)
        return names + [name for name in named if name not in names]


class AdminActionTool(Tool):
    """
    One action of a ``ModelAdmin`` as a tool (made by :func:`admin_action_tools`).

    ``model_admin`` is the ``ModelAdmin`` instance whose action it runs, ``action`` the name of
    that action (one ``model_admin.get_action()`` finds, else ``ImproperlyConfigured`` is raised)
    and ``prefix`` the start of the tool's name, ``<prefix>_<action>``.
    """

    #: The most objects one call may act on; a larger selection is refused. None: no limit.
    max_selection: int | None = 1000
    #: Whether actions other than ``delete_selected`` get a CHANGE ``LogEntry`` per object.
    log_changes: bool = True
    # The output schema is set below, never taken from call()'s return annotation.
    structured_output = False

    def __init__(self, model_admin: ModelAdmin, action: str, prefix: str) -> None:
        found = model_admin.get_action(action)
        if found is None:
            raise ImproperlyConfigured(f"{type(model_admin).__qualname__} has no action {action!r} to publish.")
        func, self.action_name, label = action_parts(found)
        self.model_admin, self.model = model_admin, model_admin.model
        opts = self.model._meta
        self.action_label = str(label % model_format_dict(opts))
        self.name = f"{prefix}_{self.action_name}"
        self.title = self.title or self.action_label
        self.description = self.description or (
            f"{self.action_label}: the Django admin action, run on the {opts.verbose_name_plural} chosen by `ids` "
            f"and/or `filter` (at least one). Returns the admin's messages and how many were selected.")
        # Clients confirm destructive tools (MCP spec 2025-11-25, server/tools, "Tool Annotations").
        destructive = self.action_name == "delete_selected" or "delete" in getattr(func, "allowed_permissions", ())
        self.annotations = self.annotations or {"readOnlyHint": False, "destructiveHint": destructive}
        self.pk_schema = value_schema(opts.pk)
        self.input_schema = self.selection_schema()
        message = {"type": "object", "required": ["level", "message"],
                   "properties": {"level": {"type": "string"}, "message": {"type": "string"}}}
        self.output_schema = {"type": "object", "required": ["action", "selected", "messages"], "properties": {
            "action": {"type": "string"}, "selected": {"type": "integer", "minimum": 0}, "messages": {
                "type": "array", "items": message}, "not_found": {"type": "array", "items": self.pk_schema},
            "response": {"type": "object", "properties": {"status": {"type": "integer"}, "content_type": {
                "type": "string"}}}}}
        super().__init__()

    def origin(self) -> str:
        return f"{type(self.model_admin).__module__}.{type(self.model_admin).__qualname__} action {self.action_name!r}"

    def selection_schema(self) -> dict[str, Any]:
        """``ids`` and, when the admin has list filters or search fields, ``filter`` (from the class's options)."""
        plural = self.model._meta.verbose_name_plural
        schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {
            "ids": {"type": "array", "items": self.pk_schema, "minItems": 1,
                    "description": f"Primary keys of the {plural} to act on."}}}
        search_fields = self.model_admin.search_fields
        paths, simple = filter_targets(self.model, self.model_admin.list_filter, search_fields)
        if not (paths or simple or search_fields):
            schema["required"] = ["ids"]
            return schema
        properties: dict[str, Any] = {path: value_schema(field) for path, field in paths.items()}
        properties.update((name, {"type": "string", "description": str(spec.title)}) for name, spec in simple.items())
        if search_fields:
            properties["search"] = {"type": "string", "description": f"Words to find in {', '.join(search_fields)}, "
                                                                     "as the admin's search box does."}
        lookups = "|".join(re.escape(path) for path in paths)
        schema["properties"]["filter"] = {
            "type": "object", "minProperties": 1, "additionalProperties": False, "properties": properties,
            "description": f"Selects {plural} as the admin's filters do: a field equals the value; `field__lookup` "
                           "(`__in` takes a list, `__isnull` a boolean; `__gte`, `__icontains`, `__year`…) compares."}
        if paths:
            schema["properties"]["filter"]["patternProperties"] = {f"^(?:{lookups})__[a-z_]+$": {}}
        return schema

    async def has_permission(self, ctx: Context) -> bool:
        """The admin's answer (staff, view or change permission, the action allowed), then the tool's own checks."""
        if not await in_thread(self.allowed_action)(self.admin_request(ctx)):
            return False
        return await super().has_permission(ctx)

    def admin_request(self, ctx: Context, post: dict[str, Any] | None = None) -> Any:
        """A POST to the changelist, from the MCP user, as the admin's action form sends it."""
        opts = self.model._meta
        try:
            path = reverse(f"{self.model_admin.admin_site.name}:{opts.app_label}_{opts.model_name}_changelist")
        except NoReverseMatch:  # an AdminSite whose URLs are not mounted
            path = f"/{opts.app_label}/{opts.model_name}/"
        request = build_request(ctx, "POST", path)
        request.user = ctx.user if ctx.user is not None else AnonymousUser()
        request.POST = QueryDict(mutable=True)
        request.POST.update({key: str(value) for key, value in (post or {}).items()})
        request._messages = CollectedMessages(request)
        # No browser, no cookie to steal: the MCP transport authenticated the caller, so nothing
        # here can be a cross-site request, and CSRF-protected code the action calls must not refuse it.
        request._dont_enforce_csrf_checks = True
        return request

    def allowed_action(self, request: Any) -> Any:
        """The action's function if the admin lets ``request.user`` run it, else None."""
        model_admin = self.model_admin
        if not (model_admin.admin_site.has_permission(request) and model_admin.has_view_or_change_permission(request)):
            return None
        found = model_admin.get_actions(request).get(self.action_name)  # filtered by allowed_permissions
        return action_parts(found)[0] if found else None

    async def validated_arguments(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """The selection's shape; which filters exist is asked of the admin when the call runs."""
        unknown = sorted(set(arguments) - set(self.input_schema["properties"]))
        if unknown:
            raise InvalidArguments(f"unknown argument {', '.join(unknown)}; expected ids and/or filter")
        ids, filters = arguments.get("ids"), arguments.get("filter")
        if ids is None and filters is None:
            raise InvalidArguments("give ids, filter or both, to say which objects to act on")
        if ids is not None:
            if not isinstance(ids, list) or not ids or not all(type(pk) in (str, int) for pk in ids):  # no bools
                raise InvalidArguments("ids: expected a non-empty list of primary keys")
            try:
                ids = [self.model._meta.pk.to_python(pk) for pk in ids]
            except ValidationError as exc:
                raise InvalidArguments(f"ids: {'; '.join(exc.messages)}") from None
        if filters is not None and (not isinstance(filters, dict) or not filters):
            raise InvalidArguments("filter: expected a non-empty object")
        return {"ids": ids, "filter": filters}

    def call(self, ctx: Context, ids: list[Any] | None, filter: dict[str, Any] | None) -> dict[str, Any]:
        """Select the objects, run the action on them as the changelist does, and log it."""
        # What the action form posts; for delete_selected, what its confirmation page's "Yes, I'm sure" adds.
        confirm = {"post": "yes"} if self.action_name == "delete_selected" else {}
        request = self.admin_request(ctx, {"action": self.action_name, "index": 0, **confirm})
        func = self.allowed_action(request)
        if func is None:
            raise PermissionDenied(f"You may not run {self.action_label!r}.")
        pks, not_found = self.selected(request, ids, filter)
        request.POST.setlist(ACTION_CHECKBOX_NAME, [str(pk) for pk in pks])  # for actions that read it
        response = None
        if pks:
            queryset = self.model_admin.get_queryset(request).filter(pk__in=pks)
            # The action and its log entries are written together, or neither is.
            with transaction.atomic(using=router.db_for_write(self.model)):
                try:
                    response = func(self.model_admin, request, queryset)
                except PermissionDenied as exc:
                    reason = (" as deleting them would delete related objects you may not delete"
                              if self.action_name == "delete_selected" else f": {exc}" if str(exc) else "")
                    raise ToolError(f"{self.action_label}: permission denied{reason}.") from None
                if response is None and self.log_changes and self.action_name != "delete_selected":
                    # Rows the action hid from the admin's queryset were still changed: read them all.
                    self.log_change(request, list(self.model._base_manager.filter(pk__in=pks)))
        return self.answer(request, len(pks), not_found, response)

    def selected(self, request: Any, ids: list[Any] | None, filters: dict[str, Any] | None) -> tuple[list, list]:
        """The keys of the objects the selection picks in the admin's queryset, and the ids it did not find."""
        queryset = self.model_admin.get_queryset(request)
        if ids is not None:
            queryset = queryset.filter(pk__in=ids)
        try:
            if filters:
                queryset = self.filtered(request, queryset, dict(filters))
            # Keys, not a lazy queryset: the action may change rows so that they no longer match the
            # filter, and its log must name what was selected. order_by() lets DISTINCT work on keys.
            limit = self.max_selection  # read one more, to tell that there are more
            pks = list(queryset.order_by().values_list("pk", flat=True).distinct()[:limit and limit + 1])
        except (ValueError, TypeError, ValidationError, FieldError) as exc:
            messages = exc.messages if isinstance(exc, ValidationError) else [str(exc)]
            raise ToolError(f"Invalid filter: {'; '.join(messages)}") from None
        if limit is not None and len(pks) > limit:
            raise ToolError(f"The selection holds more than {limit} {self.model._meta.verbose_name_plural}, more "
                            "than this tool acts on at once; narrow it.")
        found = set(pks)
        return pks, [pk for pk in ids or () if pk not in found]

    def filtered(self, request: Any, queryset: Any, filters: dict[str, Any]) -> Any:
        """``filter`` applied to the queryset; what it may name is asked of the admin for this request."""
        model_admin = self.model_admin
        search = filters.pop("search", None)
        search_fields = model_admin.get_search_fields(request)
        paths, simple = filter_targets(self.model, model_admin.get_list_filter(request), search_fields)
        for key, value in filters.items():
            if key in simple:
                # As the changelist's query string gives it: a list of strings, one of the lookups.
                spec = simple[key](request, {key: [str(value)]}, self.model, model_admin)
                choices = [str(choice) for choice, _ in spec.lookup_choices]
                if not isinstance(value, (str, int)) or str(value) not in choices:
                    raise ToolError(f"filter.{key}: expected one of {', '.join(choices)}")
                filtered = spec.queryset(request, queryset)  # None: unfiltered (never bool(): that runs it)
                queryset = queryset if filtered is None else filtered
                continue
            path, _, lookup = key.rpartition("__")
            if key not in paths and not (path in paths and (paths[path].get_lookup(lookup)
                                                            or paths[path].get_transform(lookup))):
                known = sorted([*paths, *simple, *(["search"] if search_fields else [])])
                raise ToolError(f"filter.{key}: not a filter of this tool; it filters on {', '.join(known)}"
                                " (a field, or field__lookup).")
            if lookup in ("in", "range") and key not in paths:
                if not isinstance(value, list) or not all(isinstance(item, SCALARS) for item in value):
                    raise ToolError(f"filter.{key}: expected a list")
            elif not isinstance(value, SCALARS):
                raise ToolError(f"filter.{key}: expected a string, a number, a boolean or null")
            queryset = queryset.filter(**{key: value})
        if search is not None:
            if not isinstance(search, str) or not search_fields:
                raise ToolError("filter.search: expected a string" if search_fields else
                                "filter.search: this admin has no search fields")
            queryset, _ = model_admin.get_search_results(request, queryset, search)
        return queryset

    def log_change(self, request: Any, objects: list[Any]) -> None:
        """A CHANGE ``LogEntry`` per object, as the admin's change form writes one for each save."""
        message = f"Changed via MCP tool {self.name}: {self.action_label}"
        if type(self.model_admin).log_change is not ModelAdmin.log_change:
            # The admin logs its own way (an audit trail…): follow it, one object at a time.
            for obj in objects:
                self.model_admin.log_change(request, obj, message)
        elif hasattr(LogEntry.objects, "log_actions"):
            # Django >= 5.1 writes them in one query; log_action() is deprecated there and gone in 6.0.
            LogEntry.objects.log_actions(user_id=request.user.pk, queryset=objects, action_flag=CHANGE,
                                         change_message=message)
        else:
            for obj in objects:
                content_type = ContentType.objects.get_for_model(obj, for_concrete_model=False)
                LogEntry.objects.log_action(request.user.pk, content_type.pk, obj.pk, str(obj), CHANGE, message)

    def answer(self, request: Any, selected: int, not_found: list[Any], response: Any) -> dict[str, Any]:
        """The ``CallToolResult``: structured, with its JSON as text (MCP spec 2025-11-25, server/tools)."""
        if isinstance(response, HttpResponseBase) and self.action_name == "delete_selected":
            # With "post" set, delete_selected answers a page only when protected objects forbid it.
            protected = (getattr(response, "context_data", None) or {}).get("protected") or []
            raise ToolError(f"{self.action_label}: refused, " + ("as these related objects are protected: " + "; ".join(
                strip_tags(str(item)) for item in protected) if protected else "as it answered a page, not deleting."))
        messages = [{"level": message.level_tag or str(message.level), "message": str(message.message)}
                    for message in request._messages]
        if not selected:
            messages.append({"level": "warning", "message": f"No {self.model._meta.verbose_name_plural} matched the "
                             "selection; nothing was done."})
        result: dict[str, Any] = {"action": self.action_name, "selected": selected, "messages": messages,
                                  **({"not_found": not_found} if not_found else {})}
        if isinstance(response, HttpResponseBase):
            result["response"] = {"status": response.status_code, "content_type": response.get("Content-Type", "")}
            if response.status_code >= 400:
                raise ToolError(f"{self.action_label}: the action answered HTTP {response.status_code}.")
        text = json.dumps(result, ensure_ascii=False, default=str)
        return {"content": [{"type": "text", "text": text}], "structuredContent": json.loads(text), "isError": False}


def admin_action_tools(model_admin: ModelAdmin, actions: Iterable[str] | str | None = None, *,
                       prefix: str | None = None, **options: Any) -> list[AdminActionTool]:
    """
    The tools that publish ``actions`` of ``model_admin``, a ``ModelAdmin`` instance: an action's
    name or several names; None (the default) takes the admin's ``mcp_actions``, for which it must
    use ``McpActionsMixin``. Each tool is named ``<prefix>_<action>``, where ``prefix`` defaults to
    the model's name (``model_name``). ``options`` (:data:`TOOL_OPTIONS`) apply to each tool, on
    top of the admin's own checks.
    """
    unknown = sorted(set(options) - TOOL_OPTIONS)
    if unknown:
        raise TypeError(f"admin_action_tools() got unknown options {', '.join(map(repr, unknown))}; known "
                        f"options: prefix, {', '.join(sorted(TOOL_OPTIONS))}")
    if actions is None:
        if not isinstance(model_admin, McpActionsMixin):
            raise ImproperlyConfigured(f"{type(model_admin).__qualname__} names no actions to publish: pass "
                                       "actions=[...], or add McpActionsMixin and set mcp_actions.")
        actions = model_admin.get_mcp_actions()
    names = [actions] if isinstance(actions, str) else list(actions)
    if not names:
        raise ImproperlyConfigured(f"{type(model_admin).__qualname__} has no action to publish as a tool.")
    admin_class = type(model_admin)
    attrs = {**as_class_attributes(options), "__module__": admin_class.__module__,
             "__qualname__": f"{admin_class.__qualname__}ActionTool"}
    tool_class = type(f"{admin_class.__name__}ActionTool", (AdminActionTool,), attrs)
    prefix = prefix or model_admin.model._meta.model_name
    return [tool_class(model_admin, name, prefix) for name in names]


def register_admin_actions(model: Any, admin_site: Any = None, actions: Iterable[str] | str | None = None, *,
                           site: Any = None, **options: Any) -> list[AdminActionTool]:
    """
    Publish actions of ``model``'s ``ModelAdmin`` on ``admin_site`` (default ``admin.site``) as
    tools ``<model>_<action>`` of ``site`` (default ``django_mcp.site``); ``actions`` None: its
    ``mcp_actions``. All are registered, or none.
    """
    if site is None:
        from ..sites import get_default_site

        site = get_default_site()
    model_admin = (admin_site or default_admin_site).get_model_admin(model)
    return site.add_all(admin_action_tools(model_admin, actions, **options))


__all__ = ["AdminActionTool", "CollectedMessages", "McpActionsMixin", "admin_action_tools", "register_admin_actions"]
