"""
Keeping the stdio transport's stdout for protocol messages only, from as early as possible.

MCP spec 2025-11-25, basic/transports#stdio: "The server MUST NOT write anything to its stdout
that is not a valid MCP message." Rebinding ``sys.stdout`` is not enough: a logging handler
configured on ``sys.stdout`` keeps the old object, ``os.write(1, ...)``, C extensions and child
processes write to file descriptor 1 directly, and whatever printed before the rebinding (at
import time) is already out. So the redirect works on descriptors: the original fd 1 is
duplicated for the protocol, then fd 1 is pointed at fd 2 (stderr). Everything that writes to
"stdout" afterwards, by any route, lands on stderr.

The earlier it happens, the more it catches:

- ``python -m django_mcp.stdio [options]`` redirects before Django is imported, so nothing at
  all — settings, LOGGING, every app — reaches the real stdout. This is the recommended launcher
  (docs/stdio.md).
- ``manage.py mcp_stdio``: :mod:`django_mcp.apps` calls :func:`redirect_if_serving_stdio` when
  Django imports it in ``apps.populate()``. Output from the settings module, and from the
  packages of apps listed before ``django_mcp`` in INSTALLED_APPS at import time, happened
  before that and cannot be caught; everything later (models, ``ready()``, ``mcp.py``
  autodiscovery, handlers configured by LOGGING that write later) is.

This module imports nothing from Django, so it can run before settings exist.
"""

import os
import sys
from typing import BinaryIO


__all__ = ["is_redirected", "main", "protocol_output", "redirect_if_serving_stdio", "redirect_stdout", "serving_stdio"]

COMMAND = "mcp_stdio"

# The duplicate of the original fd 1, once redirected: the only way to the client's stdout.
_protocol: BinaryIO | None = None


def redirect_stdout() -> BinaryIO:
    """
    Point fd 1 at stderr and return a binary stream on the original stdout, for protocol messages.
    Idempotent: later calls return the same stream.
    """
    global _protocol
    if _protocol is not None:
        return _protocol
    protocol_fd = os.dup(1)  # not inheritable (PEP 446): tools' child processes cannot write to it
    try:
        os.dup2(2, 1)
    except OSError:
        # No usable stderr: noise is dropped rather than let onto the protocol stream.
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    # Flushed after the redirect, so text printed earlier and still sitting in Python's buffer
    # (a pipe makes stdout block-buffered) goes to stderr too instead of ahead of the first message.
    for stream in (sys.stdout, sys.__stdout__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    # Buffered: BufferedWriter.flush() finishes a write the pipe took only part of.
    _protocol = os.fdopen(protocol_fd, "wb")
    return _protocol


def is_redirected() -> bool:
    """Whether :func:`redirect_stdout` has run in this process."""
    return _protocol is not None


def protocol_output() -> BinaryIO:
    """Where protocol messages go: the saved stdout once redirected, else the process's stdout."""
    if _protocol is not None:
        return _protocol
    return sys.__stdout__.buffer  # type: ignore[union-attr]


def serving_stdio(argv: list[str] | None = None) -> bool:
    """Whether this process is ``manage.py mcp_stdio`` (or ``django-admin``/``python -m django``) serving."""
    argv = sys.argv if argv is None else argv
    if len(argv) < 2 or argv[1] != COMMAND:
        return False
    # Help goes to the terminal's stdout as usual; nothing is served.
    return not any(arg in ("-h", "--help") for arg in argv[2:])


def redirect_if_serving_stdio() -> None:
    """Redirect now if the command line runs ``mcp_stdio`` (called while Django populates apps)."""
    if serving_stdio():
        redirect_stdout()


def main(argv: list[str] | None = None) -> None:
    """
    ``python -m django_mcp.stdio [--settings S] [--pythonpath P] [--user U] ...``: redirect stdout
    first, then set Django up and run ``mcp_stdio`` with the given options.
    """
    args = sys.argv[1:] if argv is None else argv
    if not any(arg in ("-h", "--help") for arg in args):
        redirect_stdout()
    from django.core.management import execute_from_command_line

    execute_from_command_line(["python -m django_mcp.stdio", COMMAND, *args])


if __name__ == "__main__":
    # Run as a script this file is ``__main__``; the redirect's state must live in the importable
    # module ``django_mcp.stdio``, which the transport reads, so call that one.
    from django_mcp.stdio import main as _main

    _main()
