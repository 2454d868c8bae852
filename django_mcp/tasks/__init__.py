"""
MCP tasks: long-running tool calls as durable tasks on Django's task framework (the feature app
``django_mcp.tasks``; MCP spec 2025-11-25, basic/utilities/tasks, and the 2026-07-28 extension
``io.modelcontextprotocol/tasks``, SEP-2663).

Add ``"django_mcp.tasks"`` to ``INSTALLED_APPS`` and give a tool ``task_support = "optional"`` (or
``"required"``); its calls then return a task handle at once, the work runs on the ``TASKS``
backend named by ``DJANGO_MCP["TASK_BACKEND"]``, and clients follow it with ``tasks/get``.
"""
