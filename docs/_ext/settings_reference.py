"""
The ``settings-reference`` directive: every key of ``django_mcp.conf.DEFAULTS`` with its default and
the comment conf.py writes above it (docs/_ext/settings_source.py reads them), so the reference
is the code's own description and cannot drift from it. The settings are grouped by topic
(``TOPICS``), a section each, and each one links to the others of its topic.

A setting without a comment, or in no topic, is a warning: ``scripts/docs`` (``-W``) fails until it
has one.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from rst_text import indent, inline, literal
from settings_source import TOPICS, conf_path, read_feature_settings, read_settings, topic_problems

logger = logging.getLogger(__name__)


class SettingsReference(SphinxDirective):
    """Render every setting as a ``confval`` (link to one with ``:confval:`NAME```)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from django_mcp.conf import DEFAULTS  # after django.setup() in conf.py

        path = conf_path()
        self.env.note_dependency(str(path))
        settings = read_settings(path.read_text(encoding="utf-8"))
        features = read_feature_settings(path.read_text(encoding="utf-8"))
        parsed = {setting.name for setting in settings}
        for name in sorted(set(DEFAULTS) - parsed):
            logger.warning("DJANGO_MCP[%r] is in DEFAULTS but not written in its dict literal in %s", name, path,
                           location=self.get_location())
        for problem in topic_problems(settings):
            logger.warning("settings reference: %s", problem, location=self.get_location())
        by_name = {setting.name: setting for setting in settings}
        blocks = ["Topics: " + ", ".join(f"`{title}`_" for title, _text, _members in TOPICS) + "."]
        for title, text, members in TOPICS:
            blocks.append(f"{title}\n{'-' * len(title)}\n\n{text}")
            for name in members:
                if name in by_name:
                    blocks.append(self.entry(by_name[name], features, DEFAULTS,
                                             [other for other in members if other != name and other in by_name]))
        return self.parse_text_to_nodes("\n\n".join(blocks), allow_section_headings=True)

    def entry(self, setting: Any, features: dict[str, str], defaults: dict[str, Any], related: list[str]) -> str:
        """One setting's ``confval``: its default, description, feature app and the settings of its topic."""
        if not setting.description:
            logger.warning("DJANGO_MCP[%r] has no description: write a comment above it in %s (line %d)",
                           setting.name, conf_path(), setting.lineno, location=self.get_location())
        default = literal(setting.default_source)
        evaluated = repr(defaults.get(setting.name))
        if evaluated != setting.default_source and not setting.default_source.startswith(("[", '"')):
            default += f" (= {literal(evaluated)})"
        body = [inline(setting.description) or "Undocumented."]
        if setting.shared_with:
            body.append(f"Described together with :confval:`{setting.shared_with}`.")
        if setting.name in features:
            app = features[setting.name]
            body.append(f"Read only by the feature app ``{app}``: set while it is not installed, it has no "
                        "effect (system check :check:`django_mcp.W008`).")
        if related:
            body.append("Related: " + ", ".join(f":confval:`{name}`" for name in related) + ".")
        return f".. confval:: {setting.name}\n   :default: {default}\n\n" + indent("\n\n".join(body))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("settings-reference", SettingsReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
