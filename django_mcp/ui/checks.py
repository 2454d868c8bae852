"""System checks of the views app: a tool's view and visibility must be ones hosts can use."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from ..conf import mcp_settings
from ..sites import all_sites
from .constants import SCHEME, VISIBILITY_VALUES
from .security import checked_csp
from .tool_views import view_option, view_uri


@checks.register()
def check_tool_views(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """
    A ``view`` names a template, a ``ui://`` resource of the site, or a View the site serves;
    ``view_csp`` holds origins only; ``visibility`` has known values.
    """
    found = []
    for site in all_sites():
        for tool in site.tools:
            visibility = getattr(tool, "visibility", None)
            if visibility is not None and (isinstance(visibility, str) or not visibility
                                           or set(visibility) - set(VISIBILITY_VALUES)):
                found.append(checks.Error(
                    f"The tool {tool.name!r} of site {site.name!r} has visibility={visibility!r}",
                    hint='A non-empty list of "model" and "app".', id="django_mcp.E005"))
            option = view_option(tool)
            if isinstance(option, str) and option.startswith(SCHEME):
                if site.get_registered("resource", option) is None:
                    found.append(checks.Error(
                        f"The tool {tool.name!r} of site {site.name!r} shows {option!r}, which the site does not serve",
                        hint="Register a View with that uri, or give the view's template name.", id="django_mcp.E006"))
            elif option is not None and not isinstance(option, str):
                uri = view_uri(site, tool)
                if uri is None:
                    found.append(checks.Error(f"The tool {tool.name!r} of site {site.name!r} has a view without a uri",
                                              id="django_mcp.E006"))
                elif site.get_registered("resource", uri) is None:
                    found.append(checks.Error(
                        f"The tool {tool.name!r} of site {site.name!r} shows the view {uri!r}, which the site does "
                        "not serve", hint="Register the View (@register() above its class).", id="django_mcp.E006"))
            try:  # checked here, before a client's listing would meet it
                checked_csp(getattr(tool, "view_csp", None), f"The tool {tool.name!r} of site {site.name!r}")
            except ImproperlyConfigured as error:
                found.append(checks.Error(str(error), hint="view_csp lists origins: scheme://host[:port].",
                                          id="django_mcp.E007"))
    return found


@checks.register()
def check_view_csp_setting(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``DJANGO_MCP["VIEW_CSP"]`` holds origins only, under the keys a view's csp has."""
    try:
        checked_csp(mcp_settings.VIEW_CSP, 'DJANGO_MCP["VIEW_CSP"]')
    except ImproperlyConfigured as error:
        return [checks.Error(str(error), id="django_mcp.E008",
                             hint="Origins only: scheme://host[:port]. Until fixed, views get none of them.")]
    return []
