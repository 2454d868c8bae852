"""System checks (``manage.py check``): configuration mistakes that would otherwise fail quietly."""

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks

from .conf import DEFAULTS, FEATURE_SETTINGS
from .icons import icon_problem


@checks.register(checks.Tags.compatibility)
def check_configuration(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    # Channels need not be in INSTALLED_APPS: django_mcp uses it as a library (its consumers and
    # channel layers), and its app adds only the runworker command. (django_mcp.E001, which asked
    # for it, is retired: the plain view serves projects that run no Channels at all.)
    messages: list[checks.CheckMessage] = []
    if not getattr(settings, "CHANNEL_LAYERS", None):
        messages.append(checks.Warning(
            "CHANNEL_LAYERS is not configured: list-changed and resource-updated notifications reach no stream, "
            "and workers cannot tell each other what changed.",
            hint='For one process: CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}; '
                 "for several, use channels_redis. Under a WSGI server the plain view holds no stream and its "
                 "workers share the database: silence the warning (SILENCED_SYSTEM_CHECKS).",
            id="django_mcp.W001",
        ))
    user_settings = getattr(settings, "DJANGO_MCP", {}) or {}
    if not isinstance(user_settings, dict):
        messages.append(checks.Error("DJANGO_MCP must be a dict.", id="django_mcp.E002"))
        return messages
    for name in sorted(set(user_settings) - set(DEFAULTS)):
        messages.append(checks.Warning(
            f"Unknown DJANGO_MCP setting {name!r}; it has no effect.",
            hint=f"Known settings: {', '.join(sorted(DEFAULTS))}.",
            id="django_mcp.W002",
        ))
    for name in sorted(set(user_settings) & set(FEATURE_SETTINGS)):
        app = FEATURE_SETTINGS[name]
        if not apps.is_installed(app):
            messages.append(checks.Warning(
                f'DJANGO_MCP["{name}"] is set, but it belongs to {app}, which is not in INSTALLED_APPS: it has no '
                "effect.",
                hint=f'Add "{app}" to INSTALLED_APPS, or remove the setting.',
                id="django_mcp.W008",
            ))
    return messages


@checks.register(checks.Tags.compatibility)
def check_server_identity(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """SERVER_ICONS and SERVER_WEBSITE_URL as serverInfo needs them: a client would reject them otherwise."""
    from .conf import mcp_settings

    messages: list[checks.CheckMessage] = []
    icons = mcp_settings.SERVER_ICONS
    if not isinstance(icons, (list, tuple)):
        icons = [icons] if icons else []
    for index, icon in enumerate(icons):
        problem = icon_problem(icon)
        if problem:
            messages.append(checks.Error(
                f'DJANGO_MCP["SERVER_ICONS"][{index}] {problem}.',
                hint='An icon is {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}.',
                id="django_mcp.E009",
            ))
    website = mcp_settings.SERVER_WEBSITE_URL
    if website is not None and not (isinstance(website, str) and website.startswith(("https://", "http://"))):
        messages.append(checks.Error(
            'DJANGO_MCP["SERVER_WEBSITE_URL"] must be an absolute http(s) URL.',
            hint='For example "https://library.example.com/".',
            id="django_mcp.E010",
        ))
    return messages


@checks.register(checks.Tags.security)
def check_allowed_hosts(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """
    ``"*"`` in ``ALLOWED_HOSTS`` (common in containers) lets any Host in, so the Host check no longer
    stops DNS rebinding; the Origin check still holds, but only for exact origins (docs/security.md).
    """
    if "*" not in settings.ALLOWED_HOSTS:
        return []
    return [checks.Warning(
        'ALLOWED_HOSTS contains "*": any Host header reaches the MCP endpoints, so the Host check no longer '
        "protects against DNS rebinding. Browser requests get in only from origins listed exactly "
        '(DJANGO_MCP["ALLOWED_ORIGINS"], DJANGO_MCP["PUBLIC_BASE_URL"], exact ALLOWED_HOSTS entries, the CORS '
        'allow-list); "*" trusts no Origin.',
        hint='List the server\'s host names in ALLOWED_HOSTS, or set DJANGO_MCP["PUBLIC_BASE_URL"] and '
             'DJANGO_MCP["ALLOWED_ORIGINS"] to the exact origins browser clients use (see docs/security.md).',
        id="django_mcp.W005",
    )]


@checks.register(checks.Tags.database)
def check_persistent_connections(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """
    Kept database connections without health checks: after the database restarts (or a failover,
    or a network blip), each worker's next request fails on its dead connection. MCP clients hold
    sessions and streams for hours, so workers outlive many such events.
    """
    messages: list[checks.CheckMessage] = []
    for alias, database in settings.DATABASES.items():
        keeps = database.get("CONN_MAX_AGE", 0) != 0
        if keeps and not database.get("CONN_HEALTH_CHECKS", False):
            messages.append(checks.Warning(
                f"DATABASES[{alias!r}] keeps connections (CONN_MAX_AGE) without CONN_HEALTH_CHECKS: after the "
                "database restarts, each worker's next MCP request fails on a dead connection.",
                hint=f'Set DATABASES[{alias!r}]["CONN_HEALTH_CHECKS"] = True.',
                id="django_mcp.W006"))
    return messages


@checks.register("mcp_contracts")
def check_contracts(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """
    What the sites serve differs from the committed contracts snapshot (``manage.py mcp_contracts``):
    a client written against the snapshot may break. Checked once a snapshot exists, or when
    ``DJANGO_MCP["CONTRACTS_FILE"]`` names one (then a missing file is a warning too).
    """
    from .conf import mcp_settings
    from .contract_changes import compare
    from .contracts import ContractsError, contracts_path, load, snapshot

    path = contracts_path()
    if not path.exists():
        if not mcp_settings.CONTRACTS_FILE:
            return []
        return [checks.Warning(f'DJANGO_MCP["CONTRACTS_FILE"] names {path}, which does not exist.',
                               hint="Run manage.py mcp_contracts to write it, and commit it.", id="django_mcp.W011")]
    try:
        committed = load(path)
        changes = compare(committed, snapshot())
    except ContractsError as error:
        return [checks.Warning(str(error), hint="Run manage.py mcp_contracts to write it again.", id="django_mcp.W010")]
    except Exception:  # a definition that needs the database, before migrate: nothing to compare yet
        return []
    if not changes:
        return []
    breaking = sum(change.breaking for change in changes)
    return [checks.Warning(
        f"What the MCP sites serve differs from {path.name}: {len(changes)} change(s), {breaking} breaking "
        f"({'; '.join(str(change) for change in changes[:3])}{'; …' if len(changes) > 3 else ''}).",
        hint="Run manage.py mcp_contracts --check to see every change, then manage.py mcp_contracts to accept "
             "them (and commit the file).",
        id="django_mcp.W010")]


@checks.register(checks.Tags.urls)
def check_plain_view_path(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """
    The plain view of the default site (:class:`~django_mcp.views.McpView` without ``site=``) where
    ``MCP_PATH`` says: the OAuth protected-resource metadata, the test client and ``mcp_install``
    name ``MCP_PATH``, so a client sent there by them would find nothing.
    """
    from django.urls import get_resolver

    from .conf import mcp_settings

    mounted = [path for path, view in _plain_views(get_resolver().url_patterns, "")
               if view.view_initkwargs.get("site") is None]
    expected = "/" + mcp_settings.MCP_PATH.strip("/")
    if not mounted or any(path.rstrip("/") == expected for path in mounted):
        return []
    return [checks.Warning(
        f"McpView is mounted at {', '.join(mounted)} but MCP_PATH is {expected!r}: the OAuth metadata, the test "
        "client and mcp_install name MCP_PATH.",
        hint=f'Mount it at path("{expected.lstrip("/")}", McpView.as_view()), or set DJANGO_MCP["MCP_PATH"] to '
             "where it is.",
        id="django_mcp.W012",
    )]


def _plain_views(patterns: Any, prefix: str) -> Any:
    """``(path, view)`` of every plain view in ``patterns``, for the routes whose path is plain text."""
    from django.urls import URLPattern, URLResolver
    from django.urls.resolvers import RoutePattern

    from .views import EndpointView

    for pattern in patterns:
        route = pattern.pattern
        if not isinstance(route, RoutePattern) or "<" in str(route):
            continue  # a regex or a converter: no one path to compare
        if isinstance(pattern, URLResolver):
            yield from _plain_views(pattern.url_patterns, prefix + str(route))
        elif isinstance(pattern, URLPattern) and isinstance(pattern.callback, EndpointView):
            yield "/" + (prefix + str(route)).strip("/"), pattern.callback
