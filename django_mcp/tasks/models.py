"""
An MCP task's row: a ``tools/call`` that runs apart from the request that made it (MCP spec
2025-11-25, basic/utilities/tasks; the 2026-07-28 extension ``io.modelcontextprotocol/tasks``,
SEP-2663). Everything a worker needs to answer ``tasks/get`` lives here, so any worker answers it
and the answer survives a restart: the status, the result or error, who may see it, the questions
it waits on and the answers given.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class McpTask(models.Model):
    """One task: a tool call, its owner, its status and its outcome."""

    WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED = (
        "working", "input_required", "completed", "failed", "cancelled")
    STATUSES = [(WORKING, _("working")), (INPUT_REQUIRED, _("input required")), (COMPLETED, _("completed")),
                (FAILED, _("failed")), (CANCELLED, _("cancelled"))]
    TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
    ACTIVE = (WORKING, INPUT_REQUIRED)

    #: The task id clients see: at least 128 random bits, URL-safe (the id is the only handle an
    #: anonymous client has, so it must not be guessable: SEP-2663, "Security").
    id = models.CharField(_("task id"), max_length=64, primary_key=True)
    site = models.CharField(_("site"), max_length=100, default="default")
    tool = models.CharField(_("tool"), max_length=128, db_index=True)
    arguments = models.JSONField(_("arguments"), default=dict, blank=True)
    # Who may see it: the principal (``user:<pk>`` or ``anonymous``), the OAuth client, and for an
    # anonymous legacy client its session.
    owner = models.CharField(_("owner"), max_length=100, db_index=True)
    username = models.CharField(_("username"), max_length=150, blank=True)
    client = models.CharField(_("OAuth client"), max_length=200, blank=True)
    session = models.CharField(_("session"), max_length=100, blank=True)
    # What the work runs with: the scopes of the credential, the client's capabilities and revision.
    scopes = models.JSONField(_("scopes"), null=True, blank=True)
    protocol_version = models.CharField(_("protocol revision"), max_length=16)
    client_capabilities = models.JSONField(_("client capabilities"), default=dict, blank=True)
    transport = models.CharField(_("transport"), max_length=16, blank=True)

    status = models.CharField(_("status"), max_length=16, choices=STATUSES, default=WORKING, db_index=True)
    status_message = models.TextField(_("status message"), blank=True)
    result = models.JSONField(_("result"), null=True, blank=True)
    error = models.JSONField(_("error"), null=True, blank=True)
    # Questions the work waits on (key -> {"method", "params"}), and the answers given (key -> result).
    input_requests = models.JSONField(_("input requests"), default=dict, blank=True)
    input_answers = models.JSONField(_("input answers"), default=dict, blank=True)
    # Keys ever asked: a key is never asked twice in a task's life (SEP-2663, "Task Update Requests").
    asked_keys = models.JSONField(_("keys asked"), default=list, blank=True)
    cancel_requested = models.BooleanField(_("cancel requested"), default=False)

    created = models.DateTimeField(_("created"), db_index=True)
    last_updated = models.DateTimeField(_("last updated"))
    started = models.DateTimeField(_("started"), null=True, blank=True)
    finished = models.DateTimeField(_("finished"), null=True, blank=True)
    # Written by the running work every TASK_HEARTBEAT_SECONDS: a task not heard from for three
    # of them has lost its worker.
    heartbeat = models.DateTimeField(_("heartbeat"), null=True, blank=True)
    ttl_ms = models.BigIntegerField(_("TTL (ms)"), null=True, blank=True)
    expires = models.DateTimeField(_("expires"), null=True, blank=True, db_index=True)
    # The task framework's own id for the work, and how many times it was started.
    backend_id = models.CharField(_("task framework id"), max_length=64, blank=True)
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    # What travels with the work from the request that made it (django_mcp.hooks.defer): a trace
    # context, for the hooks around its run.
    carried = models.JSONField(_("carried context"), default=dict, blank=True)

    class Meta:
        verbose_name = _("MCP task")
        verbose_name_plural = _("MCP tasks")
        ordering = ["-created"]
        indexes = [models.Index(fields=["owner", "status"], name="mcp_task_owner_status")]

    def __str__(self) -> str:
        return f"{self.tool} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL

    @property
    def duration(self):  # type: ignore[no-untyped-def]
        """How long the work ran (or has run), or None before it started."""
        if self.started is None:
            return None
        from django.utils import timezone

        return (self.finished or timezone.now()) - self.started
