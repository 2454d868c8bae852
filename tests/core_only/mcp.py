"""A tool, a resource, a resource template and a prompt in code: what the core serves by itself."""

from django_mcp import prompt, resource, tool


@tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@resource("core://motd", mime_type="text/plain")
def motd() -> str:
    return "Served by the core alone."


@resource("core://echo/{word}")
def echo(word: str) -> str:
    return word.upper()


@prompt(description="Greet someone.")
def greet(name: str) -> str:
    return f"Hello, {name}!"
