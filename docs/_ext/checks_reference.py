"""
The ``checks-reference`` directive: every system check django_mcp and its feature apps can report,
read from the source (docs/_ext/checks_source.py), each as a ``check`` object that pages link to
with ``:check:`django_mcp.W005```.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from checks_source import package_path, read_checks
from rst_text import indent, literal


class ChecksReference(SphinxDirective):
    """Render every check id with its level, tags, message and hint."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        checks = read_checks()
        for path in package_path().rglob("checks.py"):
            self.env.note_dependency(str(path))
        blocks = []
        by_id: dict[str, list[Any]] = {}
        for check in checks:
            by_id.setdefault(check.id, []).append(check)
        for ident, found in by_id.items():
            first = found[0]
            tags = ", ".join(f"``{tag}``" for tag in first.tags) or "none"
            lines = [f"**{first.level}**, tags {tags}" + (", only under ``check --deploy``" if first.deploy else "")
                     + f"; from ``{first.module}``."]
            for check in found:
                lines.append("Message: " + literal(check.message))
                if check.hint:
                    lines.append("Hint: " + literal(check.hint))
            blocks.append(f".. check:: {ident}\n\n" + indent("\n\n".join(lines)))
        return self.parse_text_to_nodes("\n\n".join(blocks))


def setup(app: Sphinx) -> dict[str, Any]:
    # A ``check`` object type: ``.. check:: id`` declares one, ``:check:`id``` links to it.
    app.add_object_type("check", "check", indextemplate="pair: %s; system check")
    app.add_directive("checks-reference", ChecksReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
