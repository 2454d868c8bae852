"""The extension's names (SEP-1865; ext-apps specification, "Extension Identifier", "UI Resource Format")."""

#: The extension identifier clients and servers put under ``capabilities.extensions``.
EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of a view, exactly (no spaces).
MIME_TYPE = "text/html;profile=mcp-app"
#: The URI scheme of views, reserved by the extension.
SCHEME = "ui://"
#: The flat key older hosts read a tool's view from (deprecated in the specification, still sent
#: by the official SDK's ``registerAppTool``).
LEGACY_RESOURCE_URI_KEY = "ui/resourceUri"
#: Who may call a tool: the model, the view (``"app"``), or both (the default).
VISIBILITY_VALUES = ("model", "app")
#: Permissions a view may ask the host for (each ``{}`` on the wire).
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
#: The CSP lists a view may declare.
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
