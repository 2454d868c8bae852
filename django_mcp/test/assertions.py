"""
What a test expects of the server, as plain functions for pytest and as methods of
:class:`McpTestCase` for ``unittest``-style tests. Each fails with an ``AssertionError`` that says
what was seen instead.
"""

from __future__ import annotations

from typing import Any

from .client import McpClient
from .errors import ErrorResponse
from .results import Answer, Listing, ToolResult
from .subscriptions import Subscription


def assert_tool_listed(client: McpClient, name: str) -> dict[str, Any]:
    """The tool ``name`` is in the ``tools/list`` of ``client``; returns it as listed."""
    return _listed(client.list_tools(), name)


async def aassert_tool_listed(client: McpClient, name: str) -> dict[str, Any]:
    """
    :func:`assert_tool_listed` for async tests: the tool ``name`` is in the ``tools/list`` of
    ``client``; returns it as listed.
    """
    return _listed(await client.alist_tools(), name)


def _listed(tools: Listing, name: str) -> dict[str, Any]:
    tool = tools.get(name)
    if tool is None:
        raise AssertionError(f"Tool {name!r} is not listed for this client; listed: {tools.names}")
    return tool


def assert_tool_hidden(client: McpClient, name: str) -> None:
    """The tool ``name`` is not in the ``tools/list`` of ``client``."""
    _hidden(client.list_tools(), name)


async def aassert_tool_hidden(client: McpClient, name: str) -> None:
    """:func:`assert_tool_hidden` for async tests: the tool ``name`` is not in the ``tools/list`` of ``client``."""
    _hidden(await client.alist_tools(), name)


def _hidden(tools: Listing, name: str) -> None:
    if name in tools.names:
        raise AssertionError(f"Tool {name!r} is listed for this client")


def assert_call_refused(client: McpClient, name: str, arguments: dict[str, Any] | None = None, *,
                        code: int | None = None, status: int | None = None, message: str | None = None,
                        ) -> ErrorResponse:
    """
    Calling the tool ``name`` through ``client``, with ``arguments`` (default none), is refused by
    the server (a JSON-RPC error or an HTTP refusal, not a tool result): with the JSON-RPC
    ``code``, the HTTP ``status`` and a ``message`` containing the text given; each left None is
    not checked. Returns the :class:`ErrorResponse`. A tool that answered ``isError`` was not
    refused: it ran.
    """
    try:
        result = client.call_tool(name, arguments or {})
    except ErrorResponse as error:
        check_error(error, code=code, status=status, message=message)
        return error
    raise AssertionError(f"Calling {name!r} was not refused; it answered {result!r}")


async def aassert_call_refused(client: McpClient, name: str, arguments: dict[str, Any] | None = None, *,
                               code: int | None = None, status: int | None = None, message: str | None = None,
                               ) -> ErrorResponse:
    """
    :func:`assert_call_refused` for async tests: calling the tool ``name`` through ``client``,
    with ``arguments`` (default none), is refused with the JSON-RPC ``code``, the HTTP ``status``
    and a ``message`` containing the text given (each left None is not checked). Returns the
    :class:`ErrorResponse`.
    """
    try:
        result = await client.acall_tool(name, arguments or {})
    except ErrorResponse as error:
        check_error(error, code=code, status=status, message=message)
        return error
    raise AssertionError(f"Calling {name!r} was not refused; it answered {result!r}")


def check_error(error: ErrorResponse, *, code: int | None, status: int | None, message: str | None) -> None:
    """``error`` has the code, status and message text given (None: any)."""
    if code is not None and error.code != code:
        raise AssertionError(f"Refused with error {error.code}, not {code}: {error}")
    if status is not None and error.status != status:
        raise AssertionError(f"Refused with HTTP {error.status}, not {status}: {error}")
    if message is not None and message not in error.message:
        raise AssertionError(f"Refused with {error.message!r}, which does not contain {message!r}")


def assert_structured_valid(client: McpClient, name: str, result: ToolResult) -> Any:
    """
    ``result`` (of the tool ``name``) has structured content valid against the ``outputSchema``
    the tool publishes to ``client`` (in its ``tools/list``); returns the structured content.
    Needs ``jsonschema`` (``pip install "django-mcpkit[testing]"``).
    """
    return _structured_valid(assert_tool_listed(client, name), result)


async def aassert_structured_valid(client: McpClient, name: str, result: ToolResult) -> Any:
    """
    :func:`assert_structured_valid` for async tests: ``result`` (of the tool ``name``) has
    structured content valid against the ``outputSchema`` the tool publishes to ``client``;
    returns the structured content.
    """
    return _structured_valid(await aassert_tool_listed(client, name), result)


def _structured_valid(tool: dict[str, Any], result: ToolResult) -> Any:
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - the extra is documented
        raise ImportError('assert_structured_valid needs jsonschema: pip install "django-mcpkit[testing]"') from None
    name = tool["name"]
    schema = tool.get("outputSchema")
    if schema is None:
        raise AssertionError(f"Tool {name!r} publishes no outputSchema")
    if result.is_error:
        raise AssertionError(f"Tool {name!r} answered an error: {result.text}")
    if result.structured is None:
        raise AssertionError(f"Tool {name!r} answered no structured content: {result.raw}")
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(result.structured), key=str)
    if errors:
        where = "; ".join(f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
                          for error in errors)
        raise AssertionError(f"Tool {name!r}'s structured content does not match its outputSchema: {where}")
    return result.structured


def assert_notified(received: Answer | Subscription | list[dict[str, Any]], method: str,
                    **params: Any) -> dict[str, Any]:
    """
    A notification named ``method`` was received — ``received`` is a call's result, a
    :class:`Subscription`, or a list of notifications — whose ``params`` include the items
    given (``assert_notified(result, "notifications/progress", progress=1)``). Returns it.
    """
    notifications = received if isinstance(received, list) else (
        received.received if isinstance(received, Subscription) else received.notifications)
    named = [message for message in notifications if message.get("method") == method]
    for message in named:
        sent = message.get("params") or {}
        if all(key in sent and sent[key] == value for key, value in params.items()):
            return message
    if not named:
        raise AssertionError(f"No {method} was received; received: {[m.get('method') for m in notifications]}")
    raise AssertionError(f"No {method} with {params!r} was received; received: {[m.get('params') for m in named]}")


class McpTestCase:
    """
    A mixin for ``django.test.TestCase`` (or any ``unittest.TestCase``): ``self.mcp_client``, a
    fresh :class:`McpClient` for each test (``mcp_client_class`` and ``mcp_protocol_version`` choose
    it), and the assertions above as methods::

        class LendingTests(McpTestCase, TestCase):
            def test_readers_cannot_see_the_admin_tools(self):
                self.mcp_client.force_authenticate(self.reader)
                self.assertToolHidden("delete_book")
    """

    mcp_client_class: type[McpClient] = McpClient
    #: The revision the client speaks (None: the client's default, the newest).
    mcp_protocol_version: str | None = None

    @property
    def mcp_client(self) -> McpClient:
        """This test's client, made by :meth:`make_mcp_client` on first use."""
        client = self.__dict__.get("_mcp_client")
        if client is None:
            client = self.__dict__["_mcp_client"] = self.make_mcp_client()
        return client

    def make_mcp_client(self) -> McpClient:
        """A new client: ``mcp_client_class(mcp_protocol_version)``; override to pass it more."""
        version = self.mcp_protocol_version
        return self.mcp_client_class(version) if version else self.mcp_client_class()

    def assertToolListed(self, name: str, client: McpClient | None = None) -> dict[str, Any]:  # noqa: N802
        return assert_tool_listed(client or self.mcp_client, name)

    def assertToolHidden(self, name: str, client: McpClient | None = None) -> None:  # noqa: N802
        assert_tool_hidden(client or self.mcp_client, name)

    def assertCallRefused(self, name: str, arguments: dict[str, Any] | None = None, *,  # noqa: N802
                          code: int | None = None, status: int | None = None, message: str | None = None,
                          client: McpClient | None = None) -> ErrorResponse:
        return assert_call_refused(client or self.mcp_client, name, arguments, code=code, status=status,
                                   message=message)

    def assertStructuredValid(self, name: str, result: ToolResult,  # noqa: N802
                              client: McpClient | None = None) -> Any:
        return assert_structured_valid(client or self.mcp_client, name, result)

    def assertNotified(self, received: Any, method: str, **params: Any) -> dict[str, Any]:  # noqa: N802
        return assert_notified(received, method, **params)
