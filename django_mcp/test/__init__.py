"""
Testing a project's MCP tools, resources and prompts the way Django and DRF test views.

:class:`McpClient` talks to the project's own ASGI application in process, through its
authentication, permissions, hooks and feature apps; the assertions and :class:`McpTestCase`
say what a test expects of it; the pytest plugin (:mod:`django_mcp.test.pytest_plugin`, loaded
by pytest on its own) gives the ``mcp_client`` and ``mcp_client_factory`` fixtures.
"""

from .assertions import (McpTestCase, aassert_call_refused, aassert_structured_valid, aassert_tool_hidden,
                         aassert_tool_listed, assert_call_refused, assert_notified, assert_structured_valid,
                         assert_tool_hidden, assert_tool_listed)
from .client import McpClient
from .errors import ErrorResponse, NoAnswer, UnansweredRequest
from .identity import ForcedCredential
from .results import Completion, Listing, PromptResult, ResourceResult, ToolResult
from .sdk import sdk_transport
from .subscriptions import Subscription


__all__ = ["Completion", "ErrorResponse", "ForcedCredential", "Listing", "McpClient", "McpTestCase", "NoAnswer",
           "PromptResult", "ResourceResult", "Subscription", "ToolResult", "UnansweredRequest", "aassert_call_refused",
           "aassert_structured_valid", "aassert_tool_hidden", "aassert_tool_listed", "assert_call_refused",
           "assert_notified", "assert_structured_valid", "assert_tool_hidden", "assert_tool_listed",
           "sdk_transport"]
