"""
Reusing a registered ``ModelAdmin`` for a model resource (``use_admin = True``): its queryset and
its view permissions decide what an MCP client sees, so rules written once for the admin are not
restated. The admin asks an ``HttpRequest``; MCP requests get a minimal one carrying the user.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

from ..context import Context
from ..permissions import BasePermission


def model_admin_for(model: Any, use_admin: Any) -> Any:
    """The ``ModelAdmin`` of ``model`` on ``use_admin`` (an ``AdminSite``, or True for ``admin.site``)."""
    from django.contrib import admin

    admin_site = admin.site if use_admin is True else use_admin
    try:
        return admin_site.get_model_admin(model)
    except admin.sites.NotRegistered:
        raise ImproperlyConfigured(f"use_admin is set for {model._meta.label}, which is not registered with "
                                   f"{admin_site!r}.") from None


def http_request(ctx: Context) -> HttpRequest:
    """A GET request from the MCP request's user, for ``ModelAdmin`` methods that take one."""
    request = HttpRequest()
    request.method = "GET"
    request.user = ctx.user
    return request


class ModelAdminViewPermission(BasePermission):
    """The ``ModelAdmin``'s ``has_view_permission``, for the model and for each row."""

    def __init__(self, model_admin: Any) -> None:
        self.model_admin = model_admin

    def has_permission(self, ctx: Context, primitive: Any) -> bool:
        user = ctx.user
        if user is None or not user.is_active:
            return False
        return bool(self.model_admin.has_view_permission(http_request(ctx)))

    def has_object_permission(self, ctx: Context, primitive: Any, obj: Any) -> bool:
        return bool(self.model_admin.has_view_permission(http_request(ctx), obj))
