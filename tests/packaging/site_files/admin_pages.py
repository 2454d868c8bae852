"""
Every admin page of every model django_mcp and django_mcp.oauth register (and DOT's OAuth clients,
which django_mcp.oauth gives an action), as JSON: the changelist, the add form and whether the
superuser may add, and the change form of the first row. Argument: the superuser's username.
"""

import json
import sys

import _setup  # noqa: F401  (Django set up with the project's settings)
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.test import RequestFactory
from django.urls import reverse
from oauth2_provider.models import get_application_model


OUR_APPS = {"django_mcp", "django_mcp_oauth"}

request = RequestFactory().get("/admin/")
request.user = get_user_model().objects.get(username=sys.argv[1])
pages = []
for model, model_admin in admin.site._registry.items():
    meta = model._meta
    ours = meta.app_label in OUR_APPS or type(model_admin).__module__.startswith("django_mcp")
    if not (ours or model is get_application_model()):
        continue
    prefix = f"admin:{meta.app_label}_{meta.model_name}"
    row = model_admin.get_queryset(request).order_by("pk").first()
    pages.append({
        "model": meta.label,
        "app_label": meta.app_label,
        "changelist": reverse(f"{prefix}_changelist"),
        "add": reverse(f"{prefix}_add"),
        "add_allowed": model_admin.has_add_permission(request),
        # quote(): as the admin's own links do; a string pk may hold "_2F"-like runs it would unquote.
        "change": reverse(f"{prefix}_change", args=[quote(row.pk)]) if row is not None else None,
    })
print(json.dumps(sorted(pages, key=lambda page: page["model"])))
