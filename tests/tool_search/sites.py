"""
The sites of tool search's tests: ``search_site`` (the 500-tool catalogue with tool search, two
pinned tools) and ``full_site`` (the same catalogue, listed whole). Live servers serve them with
``MCP_TEST_SITE=tests.tool_search.sites.search_site``.
"""

from django_mcp.sites import McpSite
from django_mcp.tool_search import enable_tool_search

from .catalogue import Switches, make_tools

switches = Switches()

search_site = McpSite("tool_search")
for tool in make_tools():
    search_site.add(tool)
search_site.add_hook(switches)
search = enable_tool_search(search_site, pinned=["get_book", "summarize_payroll", "not_a_tool"])

full_site = McpSite("tool_search_full")
for tool in make_tools():
    full_site.add(tool)
