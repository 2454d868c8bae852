from django.apps import AppConfig


class TasksConfig(AppConfig):
    """MCP tasks (see the package docstring): the tasks extension, its hook, the ``task_support`` option."""

    name = "django_mcp.tasks"
    label = "django_mcp_tasks"
    verbose_name = "MCP tasks"
    default_auto_field = "django.db.models.BigAutoField"
    #: The options this app reads, accepted by ``@tool()`` (django_mcp.primitives.options_added_by_apps).
    mcp_primitive_options = {"tool": {"task_support", "ask_before_task"}}

    def ready(self) -> None:
        from ..hooks import register_hook
        from ..protocol.extensions import register_extension
        from ..signals import clearing_expired
        from . import checks  # noqa: F401  (registers the system checks)
        from .extension import TasksExtension
        from .hooks import TaskHook
        from .maintenance import clear_tasks

        register_extension(TasksExtension())
        register_hook(TaskHook())
        clearing_expired.connect(clear_tasks, dispatch_uid="django_mcp_tasks")
