"""
Read the settings' defaults and descriptions from the source of ``django_mcp/conf.py``.

The description of a setting is the comment written for it there: the comment lines directly
above its key in ``DEFAULTS``, and a comment at the end of its line (``# None: the installed
django_mcp version``). A key with no comment above it that directly follows another key shares
that key's description: conf.py describes small groups with one comment (``# Identity reported in
serverInfo.`` above ``SERVER_NAME``, ``SERVER_TITLE``…). A key with neither is undocumented, and
the settings reference warns about it (an error under ``scripts/docs``).

This module imports neither Django nor Sphinx: tests/docs/test_settings_reference.py runs it
under plain pytest, and docs/_ext/settings_reference.py renders what it returns.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path


@dataclass(frozen=True)
class SettingSource:
    """One key of ``DEFAULTS`` as written in conf.py."""

    name: str
    #: The default as written (``4 * 1024 * 1024``), on one line.
    default_source: str
    #: The comment describing it; empty when there is none.
    description: str
    #: The key whose comment also describes this one (a group), or None when it has its own.
    shared_with: str | None
    lineno: int


def conf_path() -> Path:
    """Where ``django_mcp/conf.py`` is, found without importing it (it imports Django)."""
    spec = find_spec("django_mcp.conf")
    if spec is None or spec.origin is None:
        raise ImportError("django_mcp.conf cannot be found")
    return Path(spec.origin)


def _comments_by_line(source: str) -> dict[int, str]:
    """Line number → the text of the comment on it, without ``#`` and surrounding space."""
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    return comments


def _dict_assigned(tree: ast.Module, name: str) -> ast.Dict:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            if isinstance(node.value, ast.Dict):
                return node.value
    raise ValueError(f"conf.py has no dict literal assigned to {name}")


def _one_line(source: str, node: ast.expr) -> str:
    segment = ast.get_source_segment(source, node) or ast.unparse(node)
    # A list written over several lines reads as it would on one.
    return ast.unparse(node) if "\n" in segment else segment


def read_settings(source: str | None = None) -> list[SettingSource]:
    """Every key of ``DEFAULTS``, in the order conf.py lists them, with its description."""
    if source is None:
        source = conf_path().read_text(encoding="utf-8")
    tree = ast.parse(source)
    defaults = _dict_assigned(tree, "DEFAULTS")
    comments = _comments_by_line(source)
    lines = source.splitlines()

    def comment_only(lineno: int) -> bool:
        return lineno in comments and lines[lineno - 1].lstrip().startswith("#")

    found: list[SettingSource] = []
    # The comment above each key, which a group's later keys share (not a key's own line comment).
    group_text: dict[str, str] = {}
    previous_end = defaults.lineno
    for key, value in zip(defaults.keys, defaults.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise ValueError(f"conf.py line {getattr(key, 'lineno', '?')}: DEFAULTS keys must be string literals")
        above: list[str] = []
        line = key.lineno - 1
        while line > previous_end and comment_only(line):
            above.insert(0, comments[line])
            line -= 1
        trailing = [comments[n] for n in range(key.lineno, value.end_lineno + 1)
                    if n in comments and not comment_only(n)]
        shared_with = None
        group_text[key.value] = " ".join(above)
        if not above and found and previous_end == key.lineno - 1 and group_text[found[-1].name]:
            shared_with = found[-1].shared_with or found[-1].name
            group_text[key.value] = group_text[found[-1].name]
        description = " ".join(part for part in [group_text[key.value], *trailing] if part)
        found.append(SettingSource(key.value, _one_line(source, value), description, shared_with, key.lineno))
        previous_end = value.end_lineno
    return found


def read_feature_settings(source: str | None = None) -> dict[str, str]:
    """``FEATURE_SETTINGS``: setting → the feature app that reads it."""
    if source is None:
        source = conf_path().read_text(encoding="utf-8")
    return ast.literal_eval(_dict_assigned(ast.parse(source), "FEATURE_SETTINGS"))


def undocumented(settings: list[SettingSource]) -> list[str]:
    """The settings conf.py gives no description."""
    return [setting.name for setting in settings if not setting.description]


#: The settings reference's sections: each topic's title, what its settings decide, and the settings
#: (in the order the page lists them). Every key of ``DEFAULTS`` belongs to exactly one topic; a
#: new setting without one is a warning of the reference (an error under ``scripts/docs``).
TOPICS: list[tuple[str, str, list[str]]] = [
    ("The server and its endpoint", "What the server calls itself, which site it serves, and where.",
     ["SERVER_NAME", "SERVER_TITLE", "SERVER_VERSION", "SERVER_DESCRIPTION", "SERVER_ICONS", "SERVER_WEBSITE_URL",
      "INSTRUCTIONS", "SITE", "MODEL_OPTIONS_CLASS", "MCP_PATH",
      "SSE_PATH", "SSE_MESSAGES_PATH", "HEALTH_PATH", "READINESS_PATH", "PAGE_SIZE", "LIST_TTL_MS"]),
    ("Who may call", "Authentication, permissions, and OAuth 2.1 (``django_mcp.oauth``).",
     ["DEFAULT_AUTHENTICATION_CLASSES", "DEFAULT_PERMISSION_CLASSES", "REQUIRE_AUTHENTICATION", "PUBLIC_BASE_URL",
      "REQUIRED_SCOPES", "OAUTH_ACCEPT_UNBOUND_TOKENS", "OAUTH_ALLOWED_REDIRECT_HOSTS", "OAUTH_EXTERNAL_ISSUERS",
      "OAUTH_OTHER_RESOURCES"]),
    ("Browsers and bad input", "Which origins may call, and the limits a request must keep to.",
     ["ALLOWED_ORIGINS", "CORS_ALLOWED_ORIGINS", "CORS_MAX_AGE", "MAX_REQUEST_BODY_SIZE", "MAX_CLIENT_STATE_SIZE",
      "MAX_BATCH_LENGTH"]),
    ("Sessions", "The sessions of clients of revisions up to 2025-11-25, and what a request keeps between "
                 "round trips.",
     ["SESSION_STORE", "SIGNED_SESSION_IDS", "SESSION_IDLE_TIMEOUT_SECONDS", "SESSION_SWEEP_SECONDS",
      "SESSION_CACHE_SECONDS", "SESSION_CACHE_SIZE", "MAX_SESSIONS_PER_USER", "REQUEST_STATE_MAX_AGE_SECONDS",
      "CLIENT_REQUEST_TIMEOUT_SECONDS", "MAX_PENDING_CLIENT_REQUESTS"]),
    ("Streams and notifications", "Server-sent event streams: keep-alives, resumption, and how much one "
                                  "stream may hold.",
     ["SSE_KEEPALIVE_SECONDS", "STREAM_CREDENTIAL_CHECK_SECONDS", "SSE_RETRY_MILLISECONDS", "EVENT_STORE", "EVENT_RETENTION_SECONDS",
      "STREAM_LIVENESS_SECONDS", "STREAM_QUEUE_SIZE", "MAX_STREAMS_PER_SESSION", "MAX_SUBSCRIPTIONS"]),
    ("Tools in the admin and the call log", "The feature apps ``django_mcp.tool_admin`` and "
                                            "``django_mcp.call_log``.",
     ["TOOL_ADMIN", "TOOL_POLICY_CACHE_SECONDS", "RATE_LIMIT_CACHE", "CALL_LOG", "CALL_LOG_REDACT",
      "CALL_LOG_RETENTION_DAYS"]),
    ("Tasks", "Long tool calls as MCP tasks (the feature app ``django_mcp.tasks``).",
     ["TASK_BACKEND", "TASK_TTL_MS", "TASK_POLL_INTERVAL_MS", "MAX_TASKS_PER_USER", "TASK_HEARTBEAT_SECONDS",
      "TASK_SWEEP_SECONDS"]),
    ("Views", "Interactive views beside tools' results (the feature app ``django_mcp.ui``).",
     ["APP_ONLY_TOOLS_FOR_EVERY_CLIENT", "VIEW_CSP"]),
    ("Logs, metrics, traces and contracts", "What the server tells its operators, and the snapshot of what it "
                                            "offers clients.",
     ["REQUEST_LOG_ARGUMENTS", "REQUEST_LOG_REDACT", "METRICS_PATH", "METRICS_BEARER_TOKEN", "TRACING_RECORD_ARGUMENTS",
      "CONTRACTS_FILE"]),
    ("The worker process", "How each worker process tunes Python's memory management.",
     ["FREEZE_STARTUP_OBJECTS", "GC_THRESHOLD"]),
]


def topic_problems(settings: list[SettingSource]) -> list[str]:
    """Settings in no topic, in two, or topics naming a setting that does not exist."""
    names = [setting.name for setting in settings]
    placed = [name for _title, _text, members in TOPICS for name in members]
    problems = [f"{name} is in no topic of TOPICS (docs/_ext/settings_source.py)" for name in names
                if name not in placed]
    problems += [f"{name} is in {placed.count(name)} topics" for name in dict.fromkeys(placed)
                 if placed.count(name) > 1]
    problems += [f"TOPICS names {name}, which is not a setting" for name in placed if name not in names]
    return problems

