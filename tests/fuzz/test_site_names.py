"""
The names the strategies aim at (``site_names.py``) are what the default test site serves, so the
fuzzing reaches real tools, resources, templates and prompts rather than "unknown" answers only.
"""

import pytest
from django.contrib.auth.models import AnonymousUser

from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.versions import Era
from django_mcp.sites import get_default_site

from .site_names import PARAM_HEADERS, PROMPTS, RESOURCES, TEMPLATES, TOOL_ARGUMENTS

pytestmark = pytest.mark.django_db

# Served, but left out of the strategies on purpose (see site_names.py).
WAITING_TOOLS = {"wait_forever", "slow_steps", "sleep_sync", "test_reconnection", "slow_compute", "durable_pid",
                 "durable_idempotent_pid"}


async def listing(method: str, key: str) -> dict[str, dict]:
    site = get_default_site()
    ctx = RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=AnonymousUser(), method=method)
    lister = {"tools/list": site.list_tools, "resources/list": site.list_resources,
              "resources/templates/list": site.list_resource_templates, "prompts/list": site.list_prompts}[method]
    found, cursor = {}, None
    while True:
        page = await lister(cursor, ctx)
        found.update({item[key]: item for item in page.items})
        if (cursor := page.next_cursor) is None:
            return found


async def test_the_strategies_name_what_the_site_serves():
    tools = await listing("tools/list", "name")
    assert set(TOOL_ARGUMENTS) == set(tools) - WAITING_TOOLS
    for name, arguments in TOOL_ARGUMENTS.items():
        assert set(arguments) == set(tools[name]["inputSchema"].get("properties", {})), name
    for name, headers in PARAM_HEADERS.items():
        properties = tools[name]["inputSchema"]["properties"]
        assert {argument: properties[argument]["x-mcp-header"] for argument in headers} == headers
    assert set(RESOURCES) <= set(await listing("resources/list", "uri"))
    assert set(TEMPLATES) == set(await listing("resources/templates/list", "uriTemplate"))
    prompts = await listing("prompts/list", "name")
    assert set(PROMPTS) == set(prompts)
    for name, arguments in PROMPTS.items():
        assert tuple(argument["name"] for argument in prompts[name].get("arguments", [])) == arguments, name
