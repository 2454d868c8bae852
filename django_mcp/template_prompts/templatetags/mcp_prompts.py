"""
Template tags for prompt templates: ``{% load mcp_prompts %}``.

- ``{% message "assistant" %}…{% endmessage %}``: the text inside is a message of that role
  (``"user"`` or ``"assistant"``); text outside any message is the user's.
- ``{% embed "library://book/{pk}" pk=book %}``: the resource at that URI, read with the
  requesting user's permissions, as an embedded resource. ``{name}`` in the URI is replaced by the
  value given for ``name``, percent-encoded (RFC 3986, section 2.1), so a value cannot change the
  URI's shape. ``optional`` at the end leaves out a resource the user may not read.
- ``{% image "covers/earthsea.png" %}``: an image from the static files (found as
  ``collectstatic`` would find it), or ``{% image book.cover %}`` from a file field (an
  ``ImageField``'s file), or from bytes with ``mime_type="image/png"``. An empty file field
  renders nothing, so books without a cover need no ``{% if %}``.

Each tag leaves a marker in the text that :mod:`django_mcp.template_prompts.rendering` turns into
``PromptMessage`` objects (MCP spec 2025-11-25, server/prompts). Rendered outside a prompt, the tags
degrade to plain text.
"""

import mimetypes
import re
from typing import Any
from urllib.parse import quote

from django import template
from django.core.files import File
from django.template.base import FilterExpression, Node, NodeList
from django.template.defaulttags import token_kwargs

from ..rendering import ROLES, current_render
from ...protocol.errors import InvalidParams


register = template.Library()

_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class MessageNode(Node):
    """``{% message role %}…{% endmessage %}``."""

    def __init__(self, role: FilterExpression, nodelist: NodeList) -> None:
        self.role = role
        self.nodelist = nodelist

    def render(self, context: template.Context) -> str:
        role = str(self.role.resolve(context))
        if role not in ROLES:
            raise template.TemplateSyntaxError(f"{{% message %}} role must be 'user' or 'assistant', not {role!r}")
        inner = self.nodelist.render(context)
        collector = current_render(context)
        if collector is None:
            return inner
        return collector.marker("start", role) + inner + collector.marker("end")


@register.tag("message")
def do_message(parser: template.base.Parser, token: template.base.Token) -> MessageNode:
    bits = token.split_contents()
    if len(bits) != 2:
        raise template.TemplateSyntaxError('{% message %} takes one argument, the role: "user" or "assistant"')
    role = parser.compile_filter(bits[1])
    if isinstance(role.var, str) and not role.filters and role.var not in ROLES:
        raise template.TemplateSyntaxError(f"{{% message %}} role must be 'user' or 'assistant', not {role.var!r}")
    nodelist = parser.parse(("endmessage",))
    parser.delete_first_token()
    return MessageNode(role, nodelist)


def expand(uri: str, values: dict[str, Any]) -> str:
    """Fill ``{name}`` in ``uri`` with the percent-encoded values given; every one must be given."""
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise template.TemplateSyntaxError(f"{{% embed %}}: {{{name}}} in {uri!r} has no value; "
                                               f"pass it as {name}=…")
        return quote(str(values[name]), safe="")

    return _VARIABLE.sub(substitute, uri)


class EmbedNode(Node):
    """``{% embed uri name=value … [optional] %}``."""

    def __init__(self, uri: FilterExpression, values: dict[str, FilterExpression], optional: bool) -> None:
        self.uri = uri
        self.values = values
        self.optional = optional

    def render(self, context: template.Context) -> str:
        uri = str(self.uri.resolve(context))
        if self.values:
            uri = expand(uri, {name: value.resolve(context) for name, value in self.values.items()})
        collector = current_render(context)
        return uri if collector is None else collector.marker("embed", uri, self.optional)


@register.tag("embed")
def do_embed(parser: template.base.Parser, token: template.base.Token) -> EmbedNode:
    bits = token.split_contents()[1:]
    if not bits:
        raise template.TemplateSyntaxError("{% embed %} needs a resource URI")
    optional = bits[-1] == "optional"
    if optional:
        bits = bits[:-1]
    uri = parser.compile_filter(bits[0])
    rest = bits[1:]
    values = token_kwargs(rest, parser, support_legacy=False)
    if rest:
        raise template.TemplateSyntaxError(f"{{% embed %}}: unexpected {' '.join(rest)!r}; values for the URI go "
                                           "as name=value, and 'optional' comes last")
    return EmbedNode(uri, values, optional)


def _image_bytes(source: Any) -> tuple[bytes, str | None]:
    """The bytes and file name of an image source: a static path, a file (field) or bytes."""
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), None
    if isinstance(source, File):
        # A FieldFile opens through its storage; a plain File may already be open.
        source.open("rb")
        try:
            return source.read(), source.name
        finally:
            source.close()
    from django.contrib.staticfiles import finders

    path = finders.find(str(source))
    if not path:
        raise InvalidParams(f"No static image {str(source)!r}")
    with open(path if isinstance(path, str) else path[0], "rb") as handle:
        return handle.read(), str(source)


class ImageNode(Node):
    """``{% image source [mime_type=…] %}``."""

    def __init__(self, source: FilterExpression, mime_type: FilterExpression | None) -> None:
        self.source = source
        self.mime_type = mime_type

    def render(self, context: template.Context) -> str:
        source = self.source.resolve(context)
        if not source:
            return ""
        data, name = _image_bytes(source)
        mime_type = str(self.mime_type.resolve(context)) if self.mime_type else None
        mime_type = mime_type or (mimetypes.guess_type(name)[0] if name else None) or "image/png"
        if not mime_type.startswith("image/"):
            raise InvalidParams(f"{name or 'The image'} is {mime_type}, not an image")
        collector = current_render(context)
        if collector is None:
            return ""
        from ...content import dump, image

        return collector.marker("block", dump(image(data, mime_type=mime_type)))


@register.tag("image")
def do_image(parser: template.base.Parser, token: template.base.Token) -> ImageNode:
    bits = token.split_contents()[1:]
    if not bits:
        raise template.TemplateSyntaxError("{% image %} needs a static path, a file field or bytes")
    source = parser.compile_filter(bits[0])
    rest = bits[1:]
    options = token_kwargs(rest, parser, support_legacy=False)
    if rest or set(options) - {"mime_type"}:
        raise template.TemplateSyntaxError("{% image %} takes a source and, optionally, mime_type=…")
    return ImageNode(source, options.get("mime_type"))
