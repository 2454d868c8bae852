"""
The request-metadata headers of 2026-07-28 (MCP spec 2026-07-28, basic/transports/streamable-http): ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` must mirror the body, so that intermediaries
routing on headers and the server acting on the body cannot disagree. Any difference is
``-32020`` with HTTP 400.
"""

import base64
import binascii
import re
from typing import Any

from ..protocol.errors import HeaderMismatch
from ..protocol.extensions import extension_name_param
from . import constants


_B64_PREFIX = "=?base64?"
_B64_SUFFIX = "?="
# Anything but tab and visible ASCII (0x20-0x7E) must travel base64-wrapped (MCP spec 2026-07-28, basic/transports/streamable-http).
_NOT_PLAIN = re.compile(r"[^\t\x20-\x7e]")
# Methods whose Mcp-Name mirrors a param; an installed protocol extension names its own methods'
# (protocol/extensions.py).
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def decode_value(raw: str, header: str) -> str:
    """A header value as sent, with the ``=?base64?…?=`` wrapping undone (MCP spec 2026-07-28, basic/transports/streamable-http)."""
    value = raw.strip(" \t")
    if value.startswith(_B64_PREFIX) and value.endswith(_B64_SUFFIX) and len(value) >= len(_B64_PREFIX) + 2:
        encoded = value[len(_B64_PREFIX):-len(_B64_SUFFIX)]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise HeaderMismatch(f"{header} carries invalid base64") from None
    if _NOT_PLAIN.search(value):
        raise HeaderMismatch(f"{header} contains characters that are not allowed")
    return value


def _equal(header_value: str, body_value: Any) -> bool:
    if isinstance(body_value, bool):
        return header_value == ("true" if body_value else "false")
    if isinstance(body_value, int):
        try:
            return float(header_value) == body_value
        except ValueError:
            return False
    if isinstance(body_value, float):
        try:
            return float(header_value) == body_value
        except ValueError:
            return False
    return header_value == body_value


def header_properties(input_schema: dict[str, Any]) -> dict[str, str]:
    """Tool argument name → header name, for top-level properties marked ``x-mcp-header``."""
    found = {}
    for name, schema in (input_schema.get("properties") or {}).items():
        if isinstance(schema, dict) and isinstance(schema.get("x-mcp-header"), str):
            found[name] = schema["x-mcp-header"]
    return found


def validate(headers: dict[bytes, str], message: dict[str, Any], protocol_version: str) -> None:
    """
    Check the mirrored headers every request has against the body; raise :class:`HeaderMismatch`
    on any difference. A tool's ``Mcp-Param-*`` headers are checked by :func:`validate_params`.
    """
    version = headers.get(constants.MCP_PROTOCOL_VERSION)
    if version is None:
        raise HeaderMismatch("Missing MCP-Protocol-Version header")
    if version.strip() != protocol_version:
        raise HeaderMismatch("MCP-Protocol-Version header does not match _meta protocolVersion")
    method = message["method"]
    sent_method = headers.get(constants.MCP_METHOD)
    if sent_method is None:
        raise HeaderMismatch("Missing Mcp-Method header")
    if sent_method.strip(" \t") != method:
        raise HeaderMismatch("Mcp-Method header does not match the request body's method")
    params = message.get("params") or {}
    name_param = NAME_PARAM.get(method) or extension_name_param(method)
    if name_param is not None and name_param in params:
        sent_name = headers.get(constants.MCP_NAME)
        if sent_name is None:
            raise HeaderMismatch("Missing Mcp-Name header")
        if decode_value(sent_name, "Mcp-Name") != params[name_param]:
            raise HeaderMismatch(f"Mcp-Name header does not match params.{name_param}")


def validate_params(headers: dict[bytes, str], arguments: Any, input_schema: dict[str, Any]) -> None:
    """Check the ``Mcp-Param-*`` headers of a ``tools/call`` against its arguments and the tool's schema."""
    arguments = arguments if isinstance(arguments, dict) else {}
    for argument, header_name in header_properties(input_schema).items():
        value = arguments.get(argument)
        raw = headers.get(constants.MCP_PARAM_PREFIX + header_name.lower().encode("latin-1"))
        if value is None:
            if raw is not None:
                decode_value(raw, f"Mcp-Param-{header_name}")
            continue
        if raw is None:
            raise HeaderMismatch(f"Missing Mcp-Param-{header_name} header")
        if not _equal(decode_value(raw, f"Mcp-Param-{header_name}"), value):
            raise HeaderMismatch(f"Mcp-Param-{header_name} header does not match argument {argument!r}")
