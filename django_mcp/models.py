"""Database models: the state of legacy (initialize-based) sessions, shared by every worker."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class McpSession(models.Model):
    """
    One legacy Streamable HTTP session (2025-03-26 … 2025-11-25). Stored in the database so any
    worker can serve any request of the session; nothing about it lives in process memory.
    """

    id = models.CharField(_("session id"), max_length=64, primary_key=True)
    protocol_version = models.CharField(_("protocol version"), max_length=16)
    client_capabilities = models.JSONField(_("client capabilities"), default=dict)
    client_info = models.JSONField(_("client info"), null=True, blank=True)
    log_level = models.CharField(_("log level"), max_length=16, null=True, blank=True)
    subscriptions = models.JSONField(_("resource subscriptions"), default=list)
    # Who opened the session: later requests must come from the same principal (digest §7).
    user_key = models.CharField(_("user"), max_length=150, default="anonymous")
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_seen_at = models.DateTimeField(_("last seen"), auto_now=True, db_index=True)

    class Meta:
        verbose_name = _("MCP session")
        verbose_name_plural = _("MCP sessions")
        ordering = ["-last_seen_at"]

    def __str__(self) -> str:
        return f"{self.id[:8]}… ({self.protocol_version})"
