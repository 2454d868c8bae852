"""The admin's list of MCP tasks: tool, owner, status, duration, error; and a cancel action."""

from asgiref.sync import async_to_sync
from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _, ngettext

from . import runner, store
from .models import McpTask


@admin.register(McpTask)
class McpTaskAdmin(admin.ModelAdmin):
    """Tasks are made by clients and ended by their work: staff read them, and may cancel them."""

    list_display = ("tool", "username_or_owner", "status", "status_message", "duration_display", "created", "site")
    list_filter = ("status", "tool", "site")
    search_fields = ("id", "tool", "username", "status_message")
    date_hierarchy = "created"
    actions = ["cancel_tasks"]
    readonly_fields = [field.name for field in McpTask._meta.fields] + ["duration_display"]

    @admin.display(description=_("user"), ordering="username")
    def username_or_owner(self, task: McpTask) -> str:
        return task.username or task.owner

    @admin.display(description=_("duration"))
    def duration_display(self, task: McpTask) -> str:
        duration = task.duration
        return "" if duration is None else f"{duration.total_seconds():.1f} s"

    def has_add_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False

    @admin.action(description=_("Cancel the selected tasks"), permissions=["cancel"])
    def cancel_tasks(self, request, queryset) -> None:  # type: ignore[no-untyped-def]
        active = list(queryset.filter(status__in=McpTask.ACTIVE))

        async def cancel_all() -> int:
            count = 0
            for task in active:
                if await store.cancel(task):
                    await runner.notify(task.id)
                    count += 1
            return count

        count = async_to_sync(cancel_all)()
        self.message_user(request, ngettext("Cancelled %d task.", "Cancelled %d tasks.", count) % count,
                          messages.SUCCESS)

    def has_cancel_permission(self, request) -> bool:  # type: ignore[no-untyped-def]
        return request.user.has_perm(f"{McpTask._meta.app_label}.change_mcptask")
