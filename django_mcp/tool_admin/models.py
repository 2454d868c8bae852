"""
The admin's hold on tools: a row per tool (from code or made in the admin) that staff switch on
and off, retitle, restrict and rate-limit. The table keeps the name it had when the model lived in
the ``django_mcp`` app.
"""

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
        db_table = "django_mcp_mcptool"
        verbose_name = _("MCP tool")
        verbose_name_plural = _("MCP tools")
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["site", "name"], name="django_mcp_tool_unique_name")]

    def __str__(self) -> str:
        return self.name
