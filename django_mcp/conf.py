"""
Settings for django_mcp, all under one ``DJANGO_MCP`` dict in the project's settings::

    DJANGO_MCP = {
        "SERVER_NAME": "library",
        "MCP_PATH": "mcp",
        "SITE": "myproject.mcp_site.site",
        "DEFAULT_PERMISSION_CLASSES": ["django_mcp.permissions.IsAuthenticated"],
        "ALLOWED_ORIGINS": ["https://claude.ai"],
    }

Values are read lazily, fall back to :data:`DEFAULTS`, and are re-read when a test changes
settings (``setting_changed``), in the manner of DRF's ``api_settings``.
"""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string


DEFAULTS: dict[str, Any] = {
    # The server's name in serverInfo (initialize, server/discover and every 2026-07-28 result).
    "SERVER_NAME": "django-mcp",
    # A human-readable title in serverInfo (2025-06-18 and later); None leaves it out.
    "SERVER_TITLE": None,
    # The version in serverInfo; None: the installed django_mcp version.
    "SERVER_VERSION": None,
    # What the server is, for people, in serverInfo (2025-11-25 and later): a sentence or two; None
    # leaves it out.
    "SERVER_DESCRIPTION": None,
    # The server's icons in serverInfo (2025-11-25 and later) and on the OAuth consent page: a list
    # of {"src": an https:// or data: URI, "mimeType", "sizes": ["48x48"], "theme": "light"|"dark"}.
    "SERVER_ICONS": [],
    # The website of the server (or of the service it fronts) in serverInfo (2025-11-25 and later).
    "SERVER_WEBSITE_URL": None,
    # Instructions for the model about using this server, in the initialize and server/discover
    # results; None sends none.
    "INSTRUCTIONS": None,
    # Where the Streamable HTTP endpoint lives (no leading or trailing slash).
    "MCP_PATH": "mcp",
    # The 2024-11-05 HTTP+SSE transport's stream endpoint (GET); None leaves the transport out.
    "SSE_PATH": "sse",
    # The 2024-11-05 HTTP+SSE transport's endpoint for the client's messages (POST); None leaves it out.
    "SSE_MESSAGES_PATH": "messages/",
    # Exact origins (scheme, host, port) allowed besides the server's own; hosts come from
    # Django's ALLOWED_HOSTS. "*" and patterns never make an origin trusted.
    "ALLOWED_ORIGINS": [],
    # Request bodies above this many bytes are refused with 413.
    "MAX_REQUEST_BODY_SIZE": 4 * 1024 * 1024,
    # Seconds between SSE keep-alive comments on long-lived streams.
    "SSE_KEEPALIVE_SECONDS": 15.0,
    # Seconds between two checks that a stream's credential still authenticates (revoked, its user
    # deactivated): the stream ends at the first keep-alive after a failed one. None: no checks (a
    # credential's expiry still ends its streams).
    "STREAM_CREDENTIAL_CHECK_SECONDS": 30.0,
    # Page size of tools/list, resources/list, prompts/list.
    "PAGE_SIZE": 100,
    # 2026-07-28 caching directives on list results (MCP spec 2026-07-28, server/utilities/caching).
    "LIST_TTL_MS": 0,
    # Legacy sessions untouched this long are expired.
    "SESSION_IDLE_TIMEOUT_SECONDS": 24 * 3600,
    # Streamable HTTP session ids carry what the session is, signed with SECRET_KEY, so opening
    # one writes nothing at once (its row follows within a second, in a batch). False: plain
    # random ids, each session's row written before initialize answers.
    "SIGNED_SESSION_IDS": True,
    # Each worker keeps sessions it has read for this long before reading them again; changes
    # are announced to every worker over the channel layer at once. 0 reads every request.
    "SESSION_CACHE_SECONDS": 30.0,
    # How many sessions a worker keeps (least recently used go first).
    "SESSION_CACHE_SIZE": 10_000,
    # How long a multi-round-trip requestState stays valid.
    "REQUEST_STATE_MAX_AGE_SECONDS": 600,
    # How long the server waits for a legacy client's answer to its own request.
    "CLIENT_REQUEST_TIMEOUT_SECONDS": 300.0,
    # Pluggable pieces, as import strings.
    "SESSION_STORE": "django_mcp.stores.database_sessions.DatabaseSessionStore",
    # Stores events of legacy SSE streams for Last-Event-ID resumption; None turns that off.
    "EVENT_STORE": "django_mcp.stores.events.DatabaseEventStore",
    # Stored events older than this are removed by `manage.py mcp_clearsessions`.
    "EVENT_RETENTION_SECONDS": 3600,
    # The reconnection delay announced to clients on resumable streams (SSE `retry:`).
    "SSE_RETRY_MILLISECONDS": 1000,
    # The liveness endpoint of django_mcp.asgi.application (transports/health.py): 200 while the
    # worker's event loop answers, for load balancers and probes; None leaves it out.
    "HEALTH_PATH": "healthz",
    # The readiness endpoint: 200 when the databases and the channel layer answer, else 503;
    # None leaves it out.
    "READINESS_PATH": "readyz",
    # The site the endpoints serve and the decorators fill: an McpSite instance, or a subclass
    # (instantiated once).
    "SITE": "django_mcp.sites.McpSite",
    # The options class site.register(Model) uses when given none (the feature app
    # django_mcp.model_resources must be installed for its ModelResource).
    "MODEL_OPTIONS_CLASS": "django_mcp.model_resources.ModelResource",
    # Who is asking: tried in order, the first that recognises a credential wins.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "django_mcp.authentication.SessionAuthentication",
        "django_mcp.authentication.ProcessUserAuthentication",
    ],
    # gc.freeze() the objects that exist once django_mcp.asgi.application() has been built, so
    # full collections stop walking them (and pausing every stream of the worker).
    "FREEZE_STARTUP_OBJECTS": True,
    # The cyclic collector's first-generation threshold that django_mcp.asgi.application() sets
    # (raised only, never lowered; None leaves the interpreter's). A young collection walks every
    # object of the requests in flight, and an answered request leaves no cycle for it to find.
    "GC_THRESHOLD": 10_000,
    # What guards a primitive that sets no permission_classes of its own.
    "DEFAULT_PERMISSION_CLASSES": ["django_mcp.permissions.AllowAny"],
    # True answers every request that no authentication class recognises with a 401 and the
    # classes' WWW-Authenticate challenge, so OAuth clients start their flow (MCP spec
    # 2025-11-25, basic/authorization).
    "REQUIRE_AUTHENTICATION": False,
    # The public scheme and host of the server (https://mcp.example.com), as clients reach it
    # behind proxies. The OAuth resource identifiers and metadata URLs are derived from it; None
    # derives them from each request's own Host, which is fine in development only.
    "PUBLIC_BASE_URL": None,
    # Scopes a scoped credential (an OAuth token) needs for each kind of primitive, besides a
    # primitive's own ``required_scopes``: {"tool": ["mcp:tools"], ...}. None: what the installed
    # apps declare (django_mcp.primitives.declare_kind_scopes; django_mcp.oauth's MCP scope set).
    "REQUIRED_SCOPES": None,
    # django_mcp.oauth: accept access tokens bound to no resource (RFC 8707). 2025-03-26 clients
    # send none; later revisions must (MCP spec 2025-06-18, basic/authorization).
    "OAUTH_ACCEPT_UNBOUND_TOKENS": False,
    # django_mcp.oauth: hosts whose HTTPS redirect URIs dynamic registration accepts, besides
    # loopback ones (AllowListedRedirectHosts); e.g. ["claude.ai", "chatgpt.com"].
    "OAUTH_ALLOWED_REDIRECT_HOSTS": [],
    # django_mcp.oauth: the resource URLs of other MCP servers this site issues tokens for, as their
    # authorization server (each trusts it in its own OAUTH_EXTERNAL_ISSUERS); e.g.
    # ["https://reports.example.com/mcp"]. Tokens for any other resource are refused (invalid_target).
    "OAUTH_OTHER_RESOURCES": [],
    # django_mcp.oauth: outside authorization servers whose JWT access tokens this server accepts
    # (ExternalTokenAuthentication) and which its RFC 9728 metadata names, each a dict:
    # {"issuer": "https://login.example.com/realms/acme", "algorithms": ["RS256"], "audience": …,
    # "jwks_uri": …, "user_claim": "sub", "create_users": False}; docs: "Use your own identity provider".
    "OAUTH_EXTERNAL_ISSUERS": [],
    # The tool admin (McpTool rows): False serves tools exactly as the code defines them.
    "TOOL_ADMIN": True,
    # Each worker reads the tool rows again at least this often; saving a row announces it at once.
    "TOOL_POLICY_CACHE_SECONDS": 30.0,
    # The call log (McpToolCall): one row per tools/call, written in batches off the request path.
    "CALL_LOG": True,
    # Argument names whose values the call log replaces with "[redacted]", at any depth.
    "CALL_LOG_REDACT": ["password", "passwd", "secret", "token", "api_key", "apikey", "authorization"],
    # `manage.py mcp_clearsessions` removes calls older than this many days; None keeps them.
    "CALL_LOG_RETENTION_DAYS": 90,
    # The Django cache that counts rate-limited calls; share it (Redis, database) across workers.
    "RATE_LIMIT_CACHE": "default",
    # Limits on what one client can make the server hold. No legitimate client comes near them;
    # past them the request is refused with a clear error instead of the server growing.
    # Open legacy sessions per user (per client address for anonymous clients: behind a proxy,
    # run daphne with --proxy-headers so that is the client's, not the proxy's). None: no limit.
    "MAX_SESSIONS_PER_USER": 200,
    # Bytes of clientInfo + capabilities an initialize may ask a session to remember.
    "MAX_CLIENT_STATE_SIZE": 16 * 1024,
    # Messages in one 2025-03-26 JSON-RPC batch.
    "MAX_BATCH_LENGTH": 500,
    # Resource subscriptions of one legacy session, and URIs in one subscriptions/listen filter.
    "MAX_SUBSCRIPTIONS": 1000,
    # Open GET streams of one legacy session on one worker.
    "MAX_STREAMS_PER_SESSION": 8,
    # Server→client requests (sampling, elicitation, roots) one session may have outstanding.
    "MAX_PENDING_CLIENT_REQUESTS": 64,
    # Messages queued for one stream whose reader is slower than its notifications; past this
    # the stream is ended, so the client reconnects and re-reads instead of missing events.
    "STREAM_QUEUE_SIZE": 1000,
    # How long a resumed stream waits for a sign of life from the request it follows before it
    # answers with an error (the worker running it died).
    "STREAM_LIVENESS_SECONDS": 10.0,
    # How often a worker removes expired sessions on its own (None: only mcp_clearsessions does).
    "SESSION_SWEEP_SECONDS": 300.0,
    # Browser-based clients (CORS, https://fetch.spec.whatwg.org/#http-cors-protocol): origins
    # allowed to call the endpoints from a page. None: django-cors-headers' CORS_ALLOWED_ORIGINS
    # and CORS_ALLOWED_ORIGIN_REGEXES when that app is installed, else ALLOWED_ORIGINS.
    "CORS_ALLOWED_ORIGINS": None,
    # Seconds a browser may cache a preflight answer.
    "CORS_MAX_AGE": 7200,
    # The request log (request_log.py): one INFO line per MCP request on the logger
    # "django_mcp.requests". The arguments of tools/call and prompts/get are left out unless this
    # is True; then they are logged redacted (REQUEST_LOG_REDACT) and cut at 1,000 characters.
    "REQUEST_LOG_ARGUMENTS": False,
    # Argument names whose values the request log replaces with "[redacted]", at any depth.
    "REQUEST_LOG_REDACT": ["password", "passwd", "secret", "token", "api_key", "apikey", "authorization"],
    # The feature app django_mcp.tracing: True puts what a client sent on its spans, as the
    # OpenTelemetry MCP conventions allow on opt-in — a tools/call's arguments as JSON
    # ("gen_ai.tool.call.arguments"), a prompts/get's as "gen_ai.prompt.variable.<name>" — redacted
    # as the request log redacts them (REQUEST_LOG_REDACT) and cut at 1,000 characters.
    "TRACING_RECORD_ARGUMENTS": False,
    # Where django_mcp.asgi.application serves the Prometheus metrics of the worker that answers
    # (the feature app django_mcp.metrics); None serves none.
    "METRICS_PATH": "metrics",
    # When set, the metrics endpoint answers only requests with "Authorization: Bearer <this>".
    "METRICS_BEARER_TOKEN": None,
    # The TASKS backend (an alias of Django's TASKS setting) that runs MCP tasks (the feature app
    # django_mcp.tasks). A backend that runs work in other processes (django-tasks-db's database
    # backend, RQ, Celery) makes tasks durable; with the immediate backend (Django's default) or
    # None, tasks run in the web worker that made them and are lost when it stops.
    "TASK_BACKEND": "default",
    # How long a task and its result are kept after it was made, in milliseconds (its ttlMs); None
    # keeps them until mcp_clearsessions runs with no limit. A client may ask for less.
    "TASK_TTL_MS": 3_600_000,
    # The poll interval suggested to clients, in milliseconds (pollInterval / pollIntervalMs).
    "TASK_POLL_INTERVAL_MS": 1000,
    # Tasks one principal may have working or waiting for input at once; past it a task-augmented
    # call is refused (the client waits for one to finish). None: no limit.
    "MAX_TASKS_PER_USER": 20,
    # How often running work writes its heartbeat, in seconds. A task not heard from for three of
    # them has lost its worker: it ends failed (or, for a tool annotated idempotentHint, runs again).
    "TASK_HEARTBEAT_SECONDS": 10,
    # How often a web worker that has made, served or followed a task looks for tasks whose worker
    # stopped (three heartbeats silent), in seconds: it ends them failed (or queues an idempotent
    # tool's again) and tells their listeners, so a dead task is announced within three heartbeats
    # and one sweep. None: only a reader (tasks/get) or mcp_clearsessions notices.
    "TASK_SWEEP_SECONDS": 10,
    # Views (the feature app django_mcp.ui, the MCP Apps extension): tools only views call
    # (visibility ["app"]) are listed and callable only for clients that declared the extension.
    # True serves them to every client, for hosts that show views without declaring it; a client
    # that shows no views would then offer them to its model.
    "APP_ONLY_TOOLS_FOR_EVERY_CLIENT": False,
    # Origins every view may reach, added to each view's own csp: {"resourceDomains": [...],
    # "connectDomains": [...], "frameDomains": [...], "baseUriDomains": [...]}, origins only
    # (scheme://host[:port]). For what every page of the project loads, such as its fonts.
    "VIEW_CSP": None,
    # Where manage.py mcp_contracts keeps the snapshot of what the sites offer clients (a path);
    # None: mcp_contracts.json beside manage.py. Set, a missing snapshot is a warning (django_mcp.W011).
    "CONTRACTS_FILE": None,
}

#: Settings that only a feature app reads, and that app: set while the app is not installed, they
#: have no effect (system check django_mcp.W008).
FEATURE_SETTINGS = {
    "TOOL_ADMIN": "django_mcp.tool_admin",
    "RATE_LIMIT_CACHE": "django_mcp.tool_admin",
    "CALL_LOG": "django_mcp.call_log",
    "CALL_LOG_REDACT": "django_mcp.call_log",
    "CALL_LOG_RETENTION_DAYS": "django_mcp.call_log",
    "OAUTH_ACCEPT_UNBOUND_TOKENS": "django_mcp.oauth",
    "OAUTH_ALLOWED_REDIRECT_HOSTS": "django_mcp.oauth",
    "OAUTH_EXTERNAL_ISSUERS": "django_mcp.oauth",
    "OAUTH_OTHER_RESOURCES": "django_mcp.oauth",
    "TRACING_RECORD_ARGUMENTS": "django_mcp.tracing",
    "METRICS_PATH": "django_mcp.metrics",
    "METRICS_BEARER_TOKEN": "django_mcp.metrics",
    "TASK_BACKEND": "django_mcp.tasks",
    "TASK_TTL_MS": "django_mcp.tasks",
    "TASK_POLL_INTERVAL_MS": "django_mcp.tasks",
    "MAX_TASKS_PER_USER": "django_mcp.tasks",
    "TASK_HEARTBEAT_SECONDS": "django_mcp.tasks",
    "TASK_SWEEP_SECONDS": "django_mcp.tasks",
    "APP_ONLY_TOOLS_FOR_EVERY_CLIENT": "django_mcp.ui",
    "VIEW_CSP": "django_mcp.ui",
}

IMPORT_STRINGS = {"SESSION_STORE", "EVENT_STORE", "SITE", "MODEL_OPTIONS_CLASS", "DEFAULT_AUTHENTICATION_CLASSES",
                  "DEFAULT_PERMISSION_CLASSES"}


class McpSettings:
    """Lazy access to ``settings.DJANGO_MCP`` with defaults; import strings are resolved."""

    def __init__(self, defaults: dict[str, Any] | None = None) -> None:
        self.defaults = defaults or DEFAULTS
        self._cached: set[str] = set()

    @property
    def user_settings(self) -> dict[str, Any]:
        return getattr(settings, "DJANGO_MCP", {}) or {}

    def __getattr__(self, name: str) -> Any:
        # Only reached for a setting not read since the last reload: the value is then kept as an
        # instance attribute, so every later read is a plain attribute lookup. Settings are read on
        # every request, many times; a method call per read showed in profiles.
        if name.startswith("_") or name not in self.defaults:
            raise AttributeError(f"Invalid django_mcp setting: {name!r}")
        value = self.user_settings.get(name, self.defaults[name])
        if name in IMPORT_STRINGS:
            value = perform_import(value, name)
        self._cached.add(name)
        setattr(self, name, value)
        return value

    def reload(self) -> None:
        """Forget cached values so the next access reads settings again."""
        for name in self._cached:
            self.__dict__.pop(name, None)
        self._cached.clear()


#: Import strings whose class moved, and where it is now: settings written for an earlier release
#: keep working.
MOVED_IMPORT_STRINGS = {
    "django_mcp.stores.sessions.DatabaseSessionStore": "django_mcp.stores.database_sessions.DatabaseSessionStore",
}


def perform_import(value: Any, setting: str) -> Any:
    """Resolve an import string, or each string of a list; a failure names the setting."""
    if isinstance(value, str):
        value = MOVED_IMPORT_STRINGS.get(value, value)
        try:
            return import_string(value)
        except ImportError as exc:
            raise ImproperlyConfigured(f'Could not import {value!r} for the setting DJANGO_MCP["{setting}"]: '
                                       f"{exc}") from exc
    if isinstance(value, (list, tuple)):
        return [perform_import(item, setting) for item in value]
    return value


mcp_settings = McpSettings()


def _reload(*, setting: str, **kwargs: Any) -> None:
    if setting in ("DJANGO_MCP", "ALLOWED_HOSTS"):
        mcp_settings.reload()


setting_changed.connect(_reload)


def follow_setting(name: str, switch: Callable[[bool], None], uid: str) -> None:
    """
    Call ``switch(bool(DJANGO_MCP[name]))`` now and again whenever ``DJANGO_MCP`` changes: how a
    feature app puts itself on the request path while its setting is on and takes itself off
    while it is off. ``uid`` names the ``setting_changed`` receiver, so following twice is once.
    """

    def follow(**kwargs: Any) -> None:
        if kwargs.get("setting", "DJANGO_MCP") != "DJANGO_MCP":
            return
        try:
            value = getattr(mcp_settings, name)
        except (AttributeError, TypeError):  # DJANGO_MCP is not a dict: the system check E002 says so
            return
        switch(bool(value))

    follow()
    setting_changed.connect(follow, weak=False, dispatch_uid=uid)
