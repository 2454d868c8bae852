"""
Tool search for large catalogues: ``tools/list`` shows a few pinned tools plus ``search_tools``
(and ``call_tool``), and the model finds the rest by what they do. Every listed tool costs the
client's model context on every turn, and models choose worse among hundreds; a search costs one
call. Permissions and hooks hold throughout: a search never finds, and the proxy never calls, a
tool the request may not see. Turned on per site::

    # mysite/mcp.py
    from django_mcp.tool_search import enable_tool_search
    from django_mcp.sites import site

    enable_tool_search(site, pinned=["get_loan", "query_models"])

See docs/howto/tool-search.md.
"""

from .listing import ToolSearch, enable_tool_search
from .ranking import rank
from .tools import CallFoundTool, SearchTools

__all__ = ["CallFoundTool", "SearchTools", "ToolSearch", "enable_tool_search", "rank"]
