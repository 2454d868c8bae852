"""The one error a query document meets: a message for the model that sent it."""

from ...exceptions import ToolError


class QueryError(ToolError):
    """
    A query the tool will not run, and why, in words the model can act on ("field 'salary' is not
    exposed on employee"). It becomes the call's ``isError`` result (MCP spec 2025-11-25,
    server/tools, "Error Handling"); its message never holds a value the user may not see.
    """
