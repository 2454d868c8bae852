// The host side of the official MCP Apps SDK (@modelcontextprotocol/ext-apps/app-bridge), bundled by
// scripts/install-app-host into dist/app-host.js as one classic script that defines the global
// McpAppsHost, for the host page of tests/ui/app_host.py. Only re-exports: the harness's own host
// logic (CSP, iframe, forwarding tool calls) lives in Python and in that page, not here.
export {
  AppBridge,
  PostMessageTransport,
  SUPPORTED_PROTOCOL_VERSIONS,
  RESOURCE_MIME_TYPE,
  buildAllowAttribute,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";
