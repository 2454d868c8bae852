"""
The call log's row: one ``tools/call``, who made it, through which client, with what, how it
ended and how long it took. The table keeps the name it had when the model lived in the
``django_mcp`` app.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class McpToolCall(models.Model):
    """One call of a tool: who, through which client, with what, how it ended and how long it took."""

    OK, TOOL_ERROR, PROTOCOL_ERROR, CANCELLED, RATE_LIMITED = "ok", "tool_error", "protocol_error", "cancelled", \
        "rate_limited"
    OUTCOMES = [(OK, _("ok")), (TOOL_ERROR, _("tool error (isError)")), (PROTOCOL_ERROR, _("protocol error")),
                (CANCELLED, _("cancelled")), (RATE_LIMITED, _("rate-limited"))]

    site = models.CharField(_("site"), max_length=100, default="default")
    tool = models.CharField(_("tool"), max_length=128, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="+", verbose_name=_("user"))
    # Kept when the user is deleted, and for anonymous calls.
    username = models.CharField(_("username"), max_length=150, blank=True)
    client = models.CharField(_("OAuth client"), max_length=200, blank=True)
    arguments = models.JSONField(_("arguments"), null=True, blank=True)
    outcome = models.CharField(_("outcome"), max_length=16, choices=OUTCOMES, db_index=True)
    message = models.TextField(_("error message"), blank=True)
    duration_ms = models.FloatField(_("duration (ms)"))
    protocol_version = models.CharField(_("protocol revision"), max_length=16, blank=True)
    transport = models.CharField(_("transport"), max_length=16, blank=True)
    created = models.DateTimeField(_("called at"), db_index=True)

    class Meta:
        db_table = "django_mcp_mcptoolcall"
        verbose_name = _("MCP tool call")
        verbose_name_plural = _("MCP tool calls")
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.tool} by {self.username or 'anonymous'} ({self.outcome})"
