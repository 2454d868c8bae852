"""
Conformance resources, and the small binary samples that tools and prompts share.

Scenarios: ``resources-list``, ``resources-read-text``, ``resources-read-binary``,
``resources-templates-read``, ``resources-subscribe`` / ``resources-unsubscribe`` (and, at
2026-07-28, ``caching`` and ``sep-2164-resource-not-found``, which need nothing extra here).
"""

import base64

from django_mcp import resource


# A 1x1 red pixel, RGB 8-bit PNG (69 bytes): signature, IHDR, IDAT, IEND, all CRCs valid.
PNG_BYTES = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC"
)

# A RIFF/WAVE file (76 bytes): PCM, mono, 16-bit, 8000 Hz, 16 frames (2 ms) of silence.
WAV_BYTES = base64.b64decode(
    "UklGRkQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YSAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="
)

# The text the embedded-resource prompt embeds; also what test://example-resource reads as.
EXAMPLE_RESOURCE_TEXT = "Embedded resource content for testing."


@resource("test://static-text", name="static-text", mime_type="text/plain",
          description="A static text resource.")
def static_text() -> str:
    return "This is the content of the static text resource."


@resource("test://static-binary", name="static-binary", mime_type="image/png",
          description="A static binary resource: a 1x1 PNG image.")
def static_binary() -> bytes:
    return PNG_BYTES


@resource("test://template/{id}/data", name="template-data", mime_type="application/json",
          description="A resource template; {id} is substituted into the JSON it returns.")
def template_data(id: str) -> dict:  # noqa: A002 - the name comes from the URI template
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@resource("test://watched-resource", name="watched-resource", mime_type="text/plain",
          description="A resource clients can subscribe to for update notifications.")
def watched_resource() -> str:
    return "This is the content of the watched resource."


@resource("test://example-resource", name="example-resource", mime_type="text/plain",
          description="The resource the prompt test_prompt_with_embedded_resource embeds.")
def example_resource() -> str:
    return EXAMPLE_RESOURCE_TEXT
