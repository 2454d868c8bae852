"""What the test client raises: the server's error answers, and the ways a test goes wrong."""

from __future__ import annotations

from typing import Any


class ErrorResponse(Exception):
    """
    The server answered with a JSON-RPC error, or refused the HTTP request before any JSON-RPC (a
    401 for a missing credential, a 403 for a foreign Origin, a 404 for an unknown session…).

    ``code``, ``message`` and ``data`` are the JSON-RPC error's (``code`` is None when the body
    carried none); ``status`` and ``headers`` are the HTTP response's (``headers`` with lower-case
    names), so a test can look at a ``WWW-Authenticate`` challenge. ``method`` names the request
    that failed, when known (its JSON-RPC method, or ``GET (resuming a stream)``): the error's
    text starts with it.
    """

    def __init__(self, code: int | None, message: str, data: Any = None, *, status: int = 200,
                 headers: dict[str, str] | None = None, method: str | None = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        self.status = status
        self.headers = dict(headers or {})
        self.method = method
        where = f"{method}: " if method else ""
        super().__init__(f"{where}{message} (JSON-RPC error {code}, HTTP {status})" if code is not None
                         else f"{where}{message} (HTTP {status})")


class NoAnswer(AssertionError):
    """The server did not answer, or did not finish, within the client's ``timeout``."""


class UnansweredRequest(AssertionError):
    """
    The server asked the client something (elicitation, sampling, roots) that the test gave no answer
    for: pass ``elicitation=``, ``sampling=`` or ``roots=`` to the client. The server is told no
    answer is coming, so it does not wait; the test fails with this error.
    """
