"""
The two tools a site with tool search lists beside its pinned tools: ``search_tools``, which finds
tools by what they do, and ``call_tool``, which calls a found tool for clients that let their model
call only the tools they were listed.

Both see the site exactly as the calling request does: the search reads the same pages
``tools/list`` would give without tool search (every permission class and every hook asked), and
the call goes through the site's own ``tools/call`` path (permissions, hooks, the call log), so a
tool hidden from a user is neither found nor called through them.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from ..context import Context
from ..exceptions import ToolError
from ..protocol.context import RequestContext
from ..tools import Tool
from ..tools.results import error_result
from .ranking import rank


class FoundTools(BaseModel):
    """What ``search_tools`` answers: the best matches, as ``tools/list`` gives them, and how many matched."""

    tools: list[dict[str, Any]] = Field(description="The best matches, best first, as tools/list gives them.")
    matched: int = Field(description="How many tools matched in all.")


class SearchTools(Tool):
    """
    Finds the site's tools that match a query in their names, titles, descriptions and argument
    names, best first, with each one's whole definition (its ``inputSchema`` included) so the
    model can call it next without another round trip. ``search`` is the :class:`ToolSearch` it
    serves (its site, its options).
    """

    name = "search_tools"
    title = "Search tools"
    annotations = {"readOnlyHint": True, "openWorldHint": False}

    def __init__(self, search: Any) -> None:  # a ToolSearch: typed Any, as listing.py imports this module
        self.search = search
        self.name = search.search_tool_name
        super().__init__()
        self.description = (
            "This server has more tools than it lists. Search them by what you want to do (a few words: "
            "'lend a book', 'overdue loans'); the answer gives each match's name, description and "
            f"inputSchema, best first. Call a match by its name{self._how_to_call()}.")

    def _how_to_call(self) -> str:
        if self.search.call_tool_name:
            return f", or through {self.search.call_tool_name} if calling it directly is refused"
        return ""

    async def call(self, query: Annotated[str, Field(description="What the tool should do, in a few words.")],
                   limit: Annotated[int | None, Field(ge=1, le=50, description="How many matches to return at most.")]
                   = None, ctx: Context = None) -> FoundTools:  # type: ignore[assignment]
        if not query.strip():
            raise ToolError("Give a query: a few words about what the tool should do.")
        definitions = await self.search.searchable(ctx.request)
        matches, matched = rank(query, definitions, limit or self.search.max_results)
        return FoundTools(tools=[match.definition for match in matches], matched=matched)


class CallFoundTool(Tool):
    """
    Calls a tool ``search_tools`` found, by name, with its arguments: for clients that let their
    model call only the tools ``tools/list`` gave them. The answer is that tool's own result.
    ``search`` is the :class:`ToolSearch` it serves.
    """

    name = "call_tool"
    title = "Call a found tool"
    annotations = {"openWorldHint": False}
    input_schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name, as search_tools gave it."},
            "arguments": {"type": "object", "description": "The tool's arguments, as its inputSchema says."},
        },
        "required": ["name"],
    }

    def __init__(self, search: Any) -> None:
        self.search = search
        self.name = search.call_tool_name
        super().__init__()
        self.description = (f"Call a tool that {search.search_tool_name} found, by its name, with the arguments its "
                            "inputSchema describes. The answer is that tool's own result.")

    async def call(self, **arguments: Any) -> Any:  # never run: run() below serves the call
        raise NotImplementedError

    async def run(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        name, inner = arguments.get("name"), arguments.get("arguments", {})
        if not isinstance(name, str) or not name or not isinstance(inner, dict):
            return error_result(f"Invalid arguments for tool {self.name}: give name (a string) and arguments "
                                "(an object).")
        if name in self.search.own_names():
            return error_result(f"{name} is called directly, not through {self.name}.")
        site = self.search.site
        # Unknown and hidden alike, as tools/call reports them; here a result the model can read.
        if await site.find("tool", name, ctx) is None:
            return error_result(f"Unknown tool: {name}. Use {self.search.search_tool_name} to find one.")
        return await site.call_tool(name, inner, ctx)

