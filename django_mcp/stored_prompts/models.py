"""
Prompts staff write in the admin (:class:`McpPrompt`). The table keeps the name it had when the
model lived in the ``django_mcp`` app.
"""

from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _


class McpPrompt(models.Model):
    """
    A prompt written by staff in the admin: a Django template with its arguments (MCP spec
    2025-11-25, server/prompts). Enabled rows are listed with the prompts in code and in template
    files (see ``django_mcp.template_prompts.files`` for name clashes); saving or deleting one sends
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
        db_table = "django_mcp_mcpprompt"
        verbose_name = _("MCP prompt")
        verbose_name_plural = _("MCP prompts")
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        from .stored import validate_row

        validate_row(self)

    def as_prompt(self, site=None):  # type: ignore[no-untyped-def]
        """The :class:`~django_mcp.template_prompts.templates.TemplatePrompt` this row stands for."""
        from .stored import prompt_from_row

        return prompt_from_row(self, site)
