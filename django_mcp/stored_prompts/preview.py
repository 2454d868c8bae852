"""
The admin's preview of a stored prompt: a form of its arguments, and the messages it renders to
for the staff member (``prompts/get`` as they would see it, their permissions applied to embeds).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync

from ..protocol.context import RequestContext
from ..protocol.errors import McpError
from ..protocol.versions import Era


def shown(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the preview page shows it: role, kind and what to display."""
    content = message["content"]
    kind = content.get("type")
    if kind == "text":
        return {"role": message["role"], "kind": "text", "text": content["text"]}
    if kind == "image":
        return {"role": message["role"], "kind": "image",
                "src": f"data:{content.get('mimeType', 'image/png')};base64,{content.get('data', '')}"}
    resource = content.get("resource", {})
    return {"role": message["role"], "kind": "resource", "uri": resource.get("uri"),
            "text": resource.get("text", f"({len(resource.get('blob', ''))} base64 characters)")}


def preview(row: Any, request: Any) -> dict[str, Any]:
    """Template variables of the preview page: ``form``, and ``rendered_messages`` or ``error`` once submitted."""
    from ..sites import get_default_site

    prompt = row.as_prompt(site=get_default_site())
    submitted = "_preview" in request.GET
    initial = {name: getattr(field, "mcp_default", None) for name, field in prompt.form_class.base_fields.items()}
    form = prompt.form_class(request.GET if submitted else None, initial=initial)
    result: dict[str, Any] = {"form": form, "prompt": prompt}
    if not submitted:
        return result
    # What a client would send: strings, and nothing for a field left empty.
    arguments = {name: value for name, value in request.GET.items() if name in form.fields and value != ""}
    context = RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", user=request.user,
                             method="prompts/get")
    try:
        rendered = async_to_sync(prompt.get)(arguments, context)
    except McpError as error:
        result["error"] = error.message
    except Exception as error:  # a template that fails while rendering: show it, as the save check cannot
        result["error"] = f"{type(error).__name__}: {error}"
    else:
        result["rendered_messages"] = [shown(message) for message in rendered["messages"]]
    return result
