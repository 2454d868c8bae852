"""
The test's answers to what a server asks its client: elicitation, sampling and the client's roots.

Each is given to the client as a callable (called with the request's ``params``, sync or async,
returning the result), a list of results (taken in order, one per question), or a single result
(given every time). A kind the test gives no answer for is not declared among the client's
capabilities, so a server that needs it refuses the call as it would for a real client that
cannot answer; a list that runs out fails the test with :class:`~django_mcp.test.UnansweredRequest`.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..protocol.versions import at_least
from .errors import UnansweredRequest


METHOD_KINDS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def _source(given: Any) -> Any:
    # A list is a queue of its own (the test's list is left as it was).
    return list(given) if isinstance(given, (list, tuple)) else given


class Answers:
    """What the test answers, per kind of question (``elicitation``, ``sampling``, ``roots``)."""

    def __init__(self, elicitation: Any = None, sampling: Any = None, roots: Any = None) -> None:
        self.sources: dict[str, Any] = {}
        if elicitation is not None:
            self.sources["elicitation"] = _source(elicitation)
        if sampling is not None:
            self.sources["sampling"] = _source(sampling)
        if roots is not None:
            # Roots are a list by nature: a list of roots (URIs or {"uri", "name"}) is the answer every time.
            self.sources["roots"] = roots if callable(roots) else {"roots": [_root(root) for root in roots]}
        #: Every question asked so far, as ``(method, params)``, in order.
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def capabilities(self, protocol_version: str) -> dict[str, Any]:
        """The client capabilities these answers make true."""
        capabilities: dict[str, Any] = {}
        if "elicitation" in self.sources:
            modes = {"form": {}, "url": {}} if at_least(protocol_version, "2025-11-25") else {}
            capabilities["elicitation"] = modes
        if "sampling" in self.sources:
            capabilities["sampling"] = {}
        if "roots" in self.sources:
            capabilities["roots"] = {}
        return capabilities

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """
        The result for the server's question ``method``; :class:`~django_mcp.test.UnansweredRequest`
        when there is none.
        """
        self.asked.append((method, params))
        kind = METHOD_KINDS.get(method)
        source = self.sources.get(kind) if kind else None
        if source is None:
            raise UnansweredRequest(f"The server asked {method} and the test gives no answer for it "
                                    f"(params: {params!r}); pass {kind or 'an answer'}= to the client.")
        if isinstance(source, list):
            if not source:
                raise UnansweredRequest(f"The server asked {method} once more than the test has answers for "
                                        f"(params: {params!r}).")
            return dict(source.pop(0))
        if callable(source):
            result = source(params)
            if inspect.isawaitable(result):
                result = await result
            return dict(result)
        return dict(source)


def _root(root: Any) -> dict[str, Any]:
    return {"uri": root} if isinstance(root, str) else dict(root)
