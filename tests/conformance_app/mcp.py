"""
The fixture set for the official MCP conformance suite (``@modelcontextprotocol/conformance``,
0.1.16 and 0.2.0-alpha.12): every tool, resource and prompt its server scenarios call, under the
exact names and with the texts and shapes they check.

django_mcp autodiscovers this module (like ``admin.py``); importing the modules below registers
their fixtures on the default site:

* ``tools.py`` — content types, logging, progress and errors; sampling and elicitation (including
  SEP-1034 defaults and SEP-1330 enums); the raw JSON Schema 2020-12 tool; the transport tools
  (``test_reconnection``, ``test_x_mcp_header``); the 2026-07-28 server-stateless diagnostics
  (``test_missing_capability``, ``test_streaming_elicitation``, ``test_logging_tool``,
  ``test_trigger_*_change``) and the ``test_input_required_result_*`` tools (SEP-2322);
* ``resources.py`` — ``test://static-text``, ``test://static-binary``, the template
  ``test://template/{id}/data``, ``test://watched-resource``, ``test://example-resource``, and the
  PNG/WAV samples shared with tools and prompts;
* ``prompts.py`` — ``test_simple_prompt``, ``test_prompt_with_arguments`` (with completion of
  ``arg1``), ``test_prompt_with_embedded_resource``, ``test_prompt_with_image`` and
  ``test_input_required_result_prompt``;
* ``tasks.py`` — the ``tasks-*`` scenarios' ``greet``, ``slow_compute``, ``failing_job``,
  ``protocol_error_job``, ``confirm_delete``, ``multi_input`` and ``test_tool_with_task``
  (the feature app ``django_mcp.tasks``).

Run the suite against a server that has this app installed with ``scripts/conformance-server``
and the harness under ``tools/conformance/``.
"""

from django.apps import apps

from . import prompts, resources, tools


if apps.is_installed("django_mcp.tasks"):  # task_support is the tasks app's option
    from . import tasks  # noqa: F401

__all__ = ["prompts", "resources", "tools"]
