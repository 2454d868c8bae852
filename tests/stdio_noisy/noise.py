"""The markers the noisy app writes, so a test can find each on stderr and none on stdout."""

import logging


#: ``LOGGING`` in tests.stdio_noisy_settings sends this logger (and the root) to ``sys.stdout``.
logger = logging.getLogger("tests.stdio_noisy")

MCP_IMPORT_PRINT = "NOISE mcp.py printed at import"
MCP_IMPORT_LOG = "NOISE mcp.py logged at import"
READY_PRINT = "NOISE ready() printed"
READY_LOG = "NOISE ready() logged"
TOOL_PRINT = "NOISE tool printed"
TOOL_LOG = "NOISE tool logged"
TOOL_FD1 = "NOISE tool wrote to fd 1"
TOOL_CHILD = "NOISE tool's child process printed"
SETTINGS_PRINT = "NOISE settings module printed"
EARLY_APP_PRINT = "NOISE app before django_mcp printed at import"

#: What any launcher must keep off stdout (they happen after django_mcp's AppConfig is imported).
LATE = (MCP_IMPORT_PRINT, MCP_IMPORT_LOG, READY_PRINT, READY_LOG, TOOL_PRINT, TOOL_LOG, TOOL_FD1, TOOL_CHILD)
#: What only ``python -m django_mcp.stdio`` can keep off stdout (docs/stdio.md).
EARLY = (SETTINGS_PRINT, EARLY_APP_PRINT)
