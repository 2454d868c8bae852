"""
Fill a database migrated on the OLD layout (every model in the ``django_mcp`` app) with rows of
everything issue 29 says an upgrade keeps, and print their inventory as JSON on stdout.

Run by ``test_upgrade_from_old_layout.py`` as ``python -P fill_old_layout.py OLD_TREE`` with
``PYTHONPATH=OLD_TREE``, cwd ``OLD_TREE`` and ``DJANGO_SETTINGS_MODULE=tests.settings``, after
``migrate``: ``django_mcp`` and ``tests.settings`` are the old commit's (checked, exit 3 if not).
The models are taken where the old commit has them (``apps.get_model("django_mcp", ...)``): this
script is written for that commit, not for the current layout.

The rows: users and groups they hang on; tool rows (McpTool) with required permissions, allowed
groups, a rate limit, title/description/annotation overrides, disabled and orphaned ones; the
call log (McpToolCall); query tools (McpQueryTool, which also make their McpTool rows); stored
prompts (McpPrompt); legacy sessions of both transports and an ended one (the session tombstone),
with stream events (McpEvent); personal access tokens (django_mcp.oauth); a DOT application with
access, refresh, ID tokens and a grant. Besides the rows, the inventory lists the permissions on
the MCP models that a staff user holds through a group and directly, by model class name and codename.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import sys
import uuid
from pathlib import Path


def load_shared():  # type: ignore[no-untyped-def]
    path = Path(__file__).resolve().with_name("upgrade_rows.py")
    spec = importlib.util.spec_from_file_location("upgrade_rows", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shared = load_shared()

# What identifies each model's rows. Permissions and content types are named by app label and
# codename/model of *auth*, which the move leaves alone (the tool admin's own permissions change
# app when its models do, legitimately).
LOOKUPS = {
    ("auth", "User"): ["username", "email", "is_staff", "groups__name"],
    ("auth", "Group"): ["name"],
    ("django_mcp", "McpTool"): [
        "site", "name", "source", "enabled", "title", "description", "annotations", "required_scopes",
        "rate_limit", "log_arguments", "orphaned", "permissions__content_type__app_label",
        "permissions__codename", "groups__name"],
    ("django_mcp", "McpToolCall"): [
        "site", "tool", "user__username", "username", "client", "arguments", "outcome", "message",
        "duration_ms", "protocol_version", "transport", "created"],
    ("django_mcp", "McpQueryTool"): [
        "site", "name", "title", "description", "model__app_label", "model__model", "fields", "filters",
        "ordering", "row_limit", "enabled"],
    ("django_mcp", "McpPrompt"): [
        "name", "title", "description", "arguments", "template", "enabled", "login_required", "permission"],
    ("django_mcp", "McpSession"): [
        "id", "transport", "protocol_version", "client_capabilities", "client_info", "log_level",
        "subscriptions", "user_key", "client_address", "stream_channel", "ended", "created_at"],
    ("django_mcp", "McpEvent"): ["session__id", "stream_id", "seq", "message", "final", "created_at"],
    ("django_mcp_oauth", "PersonalAccessToken"): [
        "user__username", "name", "digest", "hint", "scope", "expires", "revoked"],
    ("oauth2_provider", "Application"): [
        "client_id", "name", "user__username", "client_type", "authorization_grant_type", "redirect_uris",
        "skip_authorization"],
    ("oauth2_provider", "AccessToken"): [
        "token", "user__username", "application__client_id", "scope", "expires"],
    ("oauth2_provider", "RefreshToken"): [
        "token", "user__username", "application__client_id", "access_token__token", "revoked"],
    ("oauth2_provider", "IDToken"): ["jti", "user__username", "application__client_id", "scope", "expires"],
    ("oauth2_provider", "Grant"): [
        "code", "user__username", "application__client_id", "redirect_uri", "scope", "code_challenge"],
}

#: The apps whose models' permissions ``upgrade-staff`` holds (through a group) before the upgrade.
MCP_APPS = ("django_mcp", "django_mcp_oauth")
#: Users whose permissions on MCP models the check asks for again, by model class name and codename.
PERMISSION_HOLDERS = ("upgrade-staff",)

#: A fixed instant, so the rows' dates are values the check can compare.
T0 = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)
LATER = datetime.datetime(2036, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)
BULK_CALLS = 150


def fill() -> None:
    from django.apps import apps
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    def model(label: str, name: str):  # type: ignore[no-untyped-def]
        return apps.get_model(label, name)

    McpTool, McpToolCall = model("django_mcp", "McpTool"), model("django_mcp", "McpToolCall")
    McpQueryTool, McpPrompt = model("django_mcp", "McpQueryTool"), model("django_mcp", "McpPrompt")
    McpSession, McpEvent = model("django_mcp", "McpSession"), model("django_mcp", "McpEvent")
    PersonalAccessToken = model("django_mcp_oauth", "PersonalAccessToken")
    Application, AccessToken = model("oauth2_provider", "Application"), model("oauth2_provider", "AccessToken")
    RefreshToken, IDToken = model("oauth2_provider", "RefreshToken"), model("oauth2_provider", "IDToken")
    Grant = model("oauth2_provider", "Grant")

    # Users and groups -------------------------------------------------------------------------
    User = get_user_model()
    alice = User.objects.create_user("upgrade-alice", "alice@example.com", "pw", is_staff=True)
    bob = User.objects.create_user("upgrade-bob", "bob@example.com", "pw")
    editors = Group.objects.create(name="upgrade-editors")
    ops = Group.objects.create(name="upgrade-ops")
    alice.groups.add(editors, ops)
    bob.groups.add(ops)
    # Staff who run the MCP admin: their permissions on django_mcp's models must still work after the
    # move (the admin asks for "<new app label>.change_mcptool": stale content types would lose them).
    tool_admins = Group.objects.create(name="upgrade-tool-admins")
    tool_admins.permissions.set(Permission.objects.filter(content_type__app_label__in=MCP_APPS))
    staff = User.objects.create_user("upgrade-staff", "staff@example.com", "pw", is_staff=True)
    staff.groups.add(tool_admins)
    staff.user_permissions.add(Permission.objects.get(content_type__app_label="django_mcp",
                                                      codename="view_mcptoolcall"))
    view_user = Permission.objects.get(content_type__app_label="auth", codename="view_user")
    change_group = Permission.objects.get(content_type__app_label="auth", codename="change_group")

    # Tool rows (the tool admin) -------------------------------------------------------------------
    search = McpTool.objects.create(
        site="default", name="upgrade_search", source=McpTool.CODE, enabled=True, title="Search (retitled)",
        description="Overridden description", annotations={"readOnlyHint": True, "openWorldHint": False},
        required_scopes="mcp:tools tests:secrets", rate_limit="10/min", log_arguments=False)
    search.permissions.set([view_user, change_group])
    search.groups.set([editors, ops])
    retired = McpTool.objects.create(site="default", name="upgrade_retired", source=McpTool.CODE, enabled=False,
                                     rate_limit="5/10s", orphaned=True)
    retired.groups.set([ops])
    McpTool.objects.create(site="other", name="upgrade_admin_tool", source=McpTool.ADMIN, title="Other site's tool",
                           rate_limit="100/hour")

    # Call log ---------------------------------------------------------------------------------
    outcomes = [McpToolCall.OK, McpToolCall.TOOL_ERROR, McpToolCall.PROTOCOL_ERROR, McpToolCall.CANCELLED,
                McpToolCall.RATE_LIMITED]
    McpToolCall.objects.create(site="default", tool="upgrade_search", user=alice, username="upgrade-alice",
                               client="upgrade-client", arguments={"q": "caf\u00e9", "limit": 3},
                               outcome=McpToolCall.OK,
                               duration_ms=12.5, protocol_version="2025-11-25", transport="streamable-http",
                               created=T0)
    McpToolCall.objects.create(site="default", tool="upgrade_search", user=None, username="", arguments=None,
                               outcome=McpToolCall.RATE_LIMITED, message="10/min exceeded", duration_ms=0.25,
                               protocol_version="2024-11-05", transport="http-sse",
                               created=T0 + datetime.timedelta(seconds=1))
    McpToolCall.objects.bulk_create([
        McpToolCall(site="default", tool=f"upgrade_bulk_{index % 7}", user=bob if index % 2 else None,
                    username="upgrade-bob" if index % 2 else "", arguments={"n": index},
                    outcome=outcomes[index % len(outcomes)], message="" if index % 5 == 0 else f"error {index}",
                    duration_ms=index * 1.5, protocol_version="2025-06-18", transport="streamable-http",
                    created=T0 + datetime.timedelta(minutes=index))
        for index in range(BULK_CALLS)])

    # Query tools (saving one makes its McpTool row, source "admin") ------------------------------
    user_type = ContentType.objects.get(app_label="auth", model="user")
    McpQueryTool.objects.create(site="default", name="upgrade_find_users", title="Find users",
                                description="Users by name", model=user_type, fields=["id", "username", "email"],
                                filters={"username": ["icontains"], "id": ["gte", "lte"]},
                                ordering=["-id", "username"], row_limit=10)
    McpQueryTool.objects.create(site="other", name="upgrade_staff", model=user_type, fields=["id", "username"],
                                filters={"is_staff": ["exact"]}, row_limit=100, enabled=False)

    # Stored prompts ---------------------------------------------------------------------------
    McpPrompt.objects.create(
        name="upgrade.summary", title="Summary", description="Summarise a topic",
        arguments=[{"name": "topic", "description": "What to write about", "required": True},
                   {"name": "tone", "choices": ["short", "long"], "default": "short"}],
        template='{% load mcp_prompts %}Summarise {{ topic }} ({{ tone }}).{% message "assistant" %}OK{% endmessage %}')
    McpPrompt.objects.create(name="upgrade-staff-only", template="Hello {{ user }}", enabled=False,
                             login_required=True, permission="auth.view_user")

    # Legacy sessions, a tombstone, stream events ------------------------------------------------
    live = McpSession.objects.create(
        id="upgrade-session-streamable-0001", transport=McpSession.STREAMABLE_HTTP, protocol_version="2025-11-25",
        client_capabilities={"roots": {"listChanged": True}, "sampling": {}},
        client_info={"name": "upgrade-client", "version": "1.0"}, log_level="info",
        subscriptions=["file:///a.txt", "catalogue://entries/1"], user_key="user:1", client_address=None)
    McpSession.objects.create(
        id="upgrade-session-sse-0002", transport=McpSession.HTTP_SSE, protocol_version="2024-11-05",
        client_capabilities={}, user_key="anonymous", client_address="203.0.113.7",
        stream_channel="specific.upgrade!channel")
    McpSession.objects.create(
        id="upgrade-session-ended-0003", transport=McpSession.STREAMABLE_HTTP, protocol_version="2025-06-18",
        user_key="anonymous", client_address="2001:db8::1", ended=True)
    McpSession.objects.filter(pk__startswith="upgrade-session-").update(created_at=T0)
    for seq, message, final in [
        (0, None, False),
        (1, {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}, False),
        (2, {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "done"}]}}, True),
    ]:
        McpEvent.objects.create(session=live, stream_id="upgradestream01", seq=seq, message=message, final=final)
    McpEvent.objects.filter(stream_id="upgradestream01").update(created_at=T0)

    # Personal access tokens -------------------------------------------------------------------
    PersonalAccessToken.issue(alice, "CI agent", scope="mcp:tools mcp:resources")
    PersonalAccessToken.issue(alice, "never expires", scope="", lifetime=None)
    revoked, _ = PersonalAccessToken.issue(bob, "revoked one", scope="mcp:tools")
    revoked.revoke()
    PersonalAccessToken.objects.filter(name="revoked one").update(revoked=T0)

    # django-oauth-toolkit ---------------------------------------------------------------------
    confidential = Application.objects.create(
        client_id="upgrade-confidential-client", client_secret="upgrade-secret", name="Upgrade confidential",
        user=alice, client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE, redirect_uris="http://127.0.0.1:9/callback")
    public = Application.objects.create(
        client_id="upgrade-public-client", name="Upgrade public (registered)", user=None,
        client_type=Application.CLIENT_PUBLIC, authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:9/public", skip_authorization=True)
    id_token = IDToken.objects.create(user=alice, application=confidential, expires=LATER, scope="openid",
                                      jti=uuid.UUID("00000000-0000-4000-8000-000000000029"))
    access = AccessToken.objects.create(user=alice, application=confidential, token="upgrade-access-token-1",
                                        expires=LATER, scope="mcp:tools mcp:prompts", id_token=id_token)
    AccessToken.objects.create(user=bob, application=public, token="upgrade-access-token-2",
                               expires=T0, scope="mcp:resources")
    RefreshToken.objects.create(user=alice, application=confidential, token="upgrade-refresh-token-1",
                                access_token=access)
    RefreshToken.objects.create(user=bob, application=public, token="upgrade-refresh-token-revoked",
                                access_token=None, revoked=T0)
    Grant.objects.create(user=bob, application=public, code="upgrade-grant-code-1", expires=LATER,
                         redirect_uri="http://127.0.0.1:9/public", scope="mcp:tools",
                         code_challenge="E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method="S256")


def held_permissions() -> dict[str, list[str]]:
    """Per user of ``PERMISSION_HOLDERS``: "ModelClass.codename" of each permission on an MCP model it has."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.db.models import Q

    held = {}
    for username in PERMISSION_HOLDERS:
        user = get_user_model()._base_manager.get(username=username)
        permissions = Permission.objects.filter(Q(group__user=user) | Q(user=user),
                                                content_type__app_label__in=MCP_APPS).distinct()
        names = {f"{permission.content_type.model_class().__name__}.{permission.codename}"
                 for permission in permissions}
        # has_perm() as the admin asks it, so the inventory holds what worked before the upgrade.
        assert all(user.has_perm(f"{permission.content_type.app_label}.{permission.codename}")
                   for permission in permissions)
        held[username] = sorted(names)
    return held


def main() -> None:
    old_tree = Path(sys.argv[1])
    import django

    django.setup()
    origins = shared.module_origins(old_tree)

    from django.apps import apps
    from django.db import connection, transaction

    with transaction.atomic():
        fill()

    inventory = {}
    for (label, name), lookups in LOOKUPS.items():
        model = apps.get_model(label, name)
        entry = shared.describe(model, lookups)
        if entry["count"] == 0:
            print(f"the fill made no {label}.{name} rows", file=sys.stderr)
            sys.exit(4)
        inventory[name] = entry
    json.dump({"origins": origins, "vendor": connection.vendor, "models": inventory,
               "permissions": held_permissions()}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
