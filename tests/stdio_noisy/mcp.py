"""Autodiscovered by django_mcp: prints and logs at import, and a tool that writes to stdout four ways."""

import os
import subprocess
import sys

from django_mcp import tool

from . import noise


print(noise.MCP_IMPORT_PRINT)
noise.logger.info(noise.MCP_IMPORT_LOG)


@tool()
def noisy_tool() -> str:
    """Print, log to a stdout handler, write to file descriptor 1, start a child that prints; then answer."""
    print(noise.TOOL_PRINT)
    noise.logger.info(noise.TOOL_LOG)
    os.write(1, noise.TOOL_FD1.encode() + b"\n")
    subprocess.run([sys.executable, "-c", f"print({noise.TOOL_CHILD!r})"], check=True, timeout=30)
    return "quiet"
