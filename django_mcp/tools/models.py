"""
The admin's hold on tools: a row per tool (from code or made in the admin) that staff switch on
and off, retitle, restrict and rate-limit, and the log of every call. Imported by
``django_mcp.models`` so Django finds them.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class McpTool(models.Model):
    """
    What the site's staff decide about one tool. Rows for the tools in code are made at start-up
    (``post_migrate``, ``manage.py mcp_sync_tools`` and a worker's first request); a tool removed
    from the code keeps its row, marked orphaned, so its settings and call log stay. Blank
    overrides keep what the code says. A tool without a row is served as the code defines it.
    """

    CODE, ADMIN = "code", "admin"
    SOURCES = [(CODE, _("code")), (ADMIN, _("admin"))]

    site = models.CharField(_("site"), max_length=100, default="default")
    name = models.CharField(_("name"), max_length=128)
    source = models.CharField(_("defined in"), max_length=8, choices=SOURCES, default=CODE)
    enabled = models.BooleanField(_("enabled"), default=True,
                                  help_text=_("Disabled tools are neither listed nor callable, for anyone."))
    title = models.CharField(_("title"), max_length=200, blank=True, help_text=_("Blank: the code's title."))
    description = models.TextField(_("description"), blank=True, help_text=_("Blank: the code's description."))
    annotations = models.JSONField(_("annotation overrides"), null=True, blank=True,
                                   help_text=_('Merged over the code\'s, e.g. {"readOnlyHint": true}.'))
    permissions = models.ManyToManyField("auth.Permission", blank=True, verbose_name=_("required permissions"),
                                         help_text=_("A user needs every one of these to see and call the tool."))
    groups = models.ManyToManyField("auth.Group", blank=True, verbose_name=_("allowed groups"),
                                    help_text=_("If any are chosen, only their members (and superusers) may use it."))
    required_scopes = models.CharField(_("required OAuth scopes"), max_length=500, blank=True,
                                       help_text=_("Space-separated; asked of OAuth tokens and other scoped "
                                                   "credentials."))
    rate_limit = models.CharField(_("rate limit"), max_length=32, blank=True,
                                  help_text=_('Calls per period per user, e.g. "10/min", "100/hour", "5/10s".'))
    log_arguments = models.BooleanField(_("log arguments"), default=True,
                                        help_text=_("Off: the call log keeps no arguments of this tool."))
    orphaned = models.BooleanField(_("orphaned"), default=False, editable=False,
                                   help_text=_("The code no longer defines this tool."))
    created = models.DateTimeField(_("created"), auto_now_add=True)
    updated = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("MCP tool")
        verbose_name_plural = _("MCP tools")
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["site", "name"], name="django_mcp_tool_unique_name")]

    def __str__(self) -> str:
        return self.name


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
        verbose_name = _("MCP tool call")
        verbose_name_plural = _("MCP tool calls")
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.tool} by {self.username or 'anonymous'} ({self.outcome})"
