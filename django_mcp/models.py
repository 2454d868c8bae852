"""Database models: the state of legacy (initialize-based) sessions, shared by every worker; prompts staff write."""

from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _


class McpSession(models.Model):
    """
    One legacy session: Streamable HTTP (2025-03-26 … 2025-11-25) or HTTP+SSE (2024-11-05). Stored in the database so any
    worker can serve any request of the session. A Streamable HTTP session with a signed id gets
    its row about a second after it opens (stores/pending_rows.py); until then its id is enough.
    """

    STREAMABLE_HTTP = "streamable-http"
    HTTP_SSE = "http-sse"
    TRANSPORTS = [(STREAMABLE_HTTP, "Streamable HTTP"), (HTTP_SSE, "HTTP+SSE (2024-11-05)")]

    id = models.CharField(_("session id"), max_length=64, primary_key=True)
    # A session belongs to the transport that opened it: a /mcp session id means nothing to
    # /messages/, and the other way round.
    transport = models.CharField(_("transport"), max_length=16, choices=TRANSPORTS, default=STREAMABLE_HTTP)
    protocol_version = models.CharField(_("protocol version"), max_length=16)
    client_capabilities = models.JSONField(_("client capabilities"), default=dict)
    client_info = models.JSONField(_("client info"), null=True, blank=True)
    log_level = models.CharField(_("log level"), max_length=16, null=True, blank=True)
    subscriptions = models.JSONField(_("resource subscriptions"), default=list)
    # Who opened the session: later requests must come from the same principal (MCP security best practices).
    user_key = models.CharField(_("user"), max_length=150, default="anonymous")
    # Where an anonymous client connected from: its open sessions are counted per address.
    client_address = models.GenericIPAddressField(_("client address"), null=True, blank=True)
    # HTTP+SSE: the channel of the worker holding the session's stream, so answers are sent to it
    # directly (with backpressure) rather than through a group, which drops what does not fit.
    stream_channel = models.CharField(_("stream channel"), max_length=200, blank=True, default="")
    # Ended while its signed id could still stand for it without a row: the row stays, as a
    # tombstone, until that id could not (stores/pending_rows.py).
    ended = models.BooleanField(_("ended"), default=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_seen_at = models.DateTimeField(_("last seen"), auto_now=True, db_index=True)

    class Meta:
        verbose_name = _("MCP session")
        verbose_name_plural = _("MCP sessions")
        ordering = ["-last_seen_at"]
        indexes = [models.Index(fields=["user_key", "client_address"], name="django_mcp_session_owner")]

    def __str__(self) -> str:
        return f"{self.id[:8]}… ({self.protocol_version})"


class McpEvent(models.Model):
    """
    One event of a legacy session's POST SSE stream, kept so a client whose connection dropped
    can resume with ``Last-Event-ID`` on any worker (MCP spec 2025-11-25, basic/transports#streamable-http, resumability). Event ids are
    ``<stream id>.<sequence>``, so an id names its stream, as 2025-11-25 recommends.
    """

    session = models.ForeignKey(McpSession, on_delete=models.CASCADE, related_name="events")
    stream_id = models.CharField(_("stream id"), max_length=32)
    seq = models.PositiveIntegerField(_("sequence"))
    # None for the priming event (sequence 0), which opens the stream and carries no message.
    message = models.JSONField(_("message"), null=True)
    final = models.BooleanField(_("ends the stream"), default=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = _("MCP stream event")
        verbose_name_plural = _("MCP stream events")
        ordering = ["stream_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["stream_id", "seq"], name="django_mcp_event_stream_seq")]

    def __str__(self) -> str:
        return f"{self.stream_id}.{self.seq}"


class McpPrompt(models.Model):
    """
    A prompt written by staff in the admin: a Django template with its arguments (MCP spec
    2025-11-25, server/prompts). Enabled rows are listed with the prompts in code and in template
    files (see ``django_mcp.prompts.discovery`` for name clashes); saving or deleting one sends
    ``notifications/prompts/list_changed`` to connected clients on every worker.
    """

    name = models.CharField(_("name"), max_length=100, unique=True, validators=[RegexValidator(
        r"^[A-Za-z0-9_.-]+$", _("Letters, digits, '_', '-' and '.' only: clients show it as a command."))])
    title = models.CharField(_("title"), max_length=200, blank=True)
    description = models.TextField(_("description"), blank=True)
    arguments = models.JSONField(_("arguments"), default=list, blank=True, help_text=_(
        'A list of arguments, e.g. [{"name": "topic", "description": "What to write about"}, {"name": "tone", '
        '"choices": ["short", "long"], "default": "short"}]. Keys: name, title, description, type (str, int, '
        'float, decimal, bool, date, datetime, time, email, url, slug, uuid), required, default, choices.'))
    template = models.TextField(_("template"), help_text=_(
        'Django template of the messages. Arguments, "user" and "language" are variables; {% load mcp_prompts %} '
        'gives {% message "assistant" %}…{% endmessage %}, {% embed "uri" %} and {% image "static/path.png" %}. '
        'Autoescaping is off.'))
    enabled = models.BooleanField(_("enabled"), default=True)
    login_required = models.BooleanField(_("login required"), default=False,
                                         help_text=_("Only authenticated users see and use it."))
    permission = models.CharField(_("permission"), max_length=255, blank=True, help_text=_(
        'Only users with this permission see and use it, as "app_label.codename"; blank for everyone.'))
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("MCP prompt")
        verbose_name_plural = _("MCP prompts")
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        from .prompts.stored import validate_row

        validate_row(self)

    def as_prompt(self, site=None):  # type: ignore[no-untyped-def]
        """The :class:`~django_mcp.prompts.templates.TemplatePrompt` this row stands for."""
        from .prompts.stored import prompt_from_row

        return prompt_from_row(self, site)


def _prompts_changed(sender, **kwargs) -> None:  # type: ignore[no-untyped-def]
    from .prompts.stored import announce_change

    announce_change()


models.signals.post_save.connect(_prompts_changed, sender=McpPrompt, dispatch_uid="django_mcp_prompt_saved")
models.signals.post_delete.connect(_prompts_changed, sender=McpPrompt, dispatch_uid="django_mcp_prompt_deleted")


from .tools.models import McpTool, McpToolCall  # noqa: E402,F401  (the tool admin's models live with the tools)
from .tools.query_models import McpQueryTool  # noqa: E402,F401  (query tools staff define in the admin)
