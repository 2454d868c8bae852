"""Database models of the core: the state of legacy (initialize-based) sessions and their stream events, shared by every worker."""

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
