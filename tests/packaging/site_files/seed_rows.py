"""
A row of every model whose admin change page tests/packaging opens and that the admin cannot add
(or whose add form needs more than a test should type): a session, a call log entry, a query tool,
an OAuth client, an outside identity, and books for the query tool and the resources. Prints nothing; fails loudly.
"""

import _setup  # noqa: F401  (Django set up with the project's settings)
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone
from library.models import Book
from oauth2_provider.models import get_application_model

from django_mcp.call_log.models import McpToolCall
from django_mcp.models import McpSession
from django_mcp.oauth.models import ExternalIdentity
from django_mcp.query_tools.models import McpQueryTool


for title in ("The Dispossessed", "Invisible Cities", "The Left Hand of Darkness"):
    Book.objects.get_or_create(title=title)
McpSession.objects.get_or_create(id="packaging-test-session", defaults={
    "protocol_version": "2025-11-25", "user_key": "admin", "client_info": {"name": "packaging", "version": "1"}})
McpToolCall.objects.create(tool="whoami", username="admin", outcome=McpToolCall.OK, duration_ms=1.5,
                           protocol_version="2025-11-25", transport="streamable-http", created=timezone.now())
query_tool = McpQueryTool(name="books_by_title", title="Books by title", model=ContentType.objects.get_for_model(Book),
                          fields=["id", "title"], filters={"title": ["icontains"]}, ordering=["title"])
query_tool.full_clean()
query_tool.save()
get_application_model().objects.get_or_create(name="packaging seed client", defaults={
    "client_type": "public", "authorization_grant_type": "authorization-code",
    "redirect_uris": "http://127.0.0.1:8765/callback"})
ExternalIdentity.objects.get_or_create(issuer="https://login.example.com/realms/acme", subject="packaging-subject",
                                       defaults={"user": get_user_model().objects.get_or_create(username="idp-user")[0]})
