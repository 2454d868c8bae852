"""
Matching URIs against RFC 6570 templates, for ``resources/read`` of templated resources.

Expressions supported: ``{var}`` (one path segment), ``{+var}`` and ``{#var}`` (reserved
expansion, may span ``/``), ``{/var}`` and ``{.var}`` (prefixed segments), and ``{?a,b}`` /
``{&a}`` (query parameters, optional, any order).
"""

import re
from urllib.parse import parse_qsl, unquote

_EXPRESSION = re.compile(r"\{([+#./?&]?)([A-Za-z0-9_.,%]+)\}")


_PREFIX_AND_SEPARATOR = {"": ("", ","), "+": ("", ","), "#": ("#", ","), "/": ("/", "/"), ".": (".", ".")}


class UriTemplate:
    """A compiled template: ``match(uri)`` gives the variables, or None."""

    def __init__(self, template: str) -> None:
        self.template = template
        self.variables: list[str] = []
        self.query_variables: list[str] = []
        pattern = ""
        position = 0
        for match in _EXPRESSION.finditer(template):
            pattern += re.escape(template[position:match.start()])
            operator, names = match.group(1), match.group(2).split(",")
            position = match.end()
            if operator in ("?", "&"):
                self.query_variables.extend(names)
                pattern += r"(?:[?&](?P<__query>.*))?" if "__query" not in pattern else ""
                continue
            # RFC 6570 §3.2: each operator has a prefix before the first value and a separator
            # between values ("," for simple and reserved, "/" for path, "." for label).
            prefix, separator = _PREFIX_AND_SEPARATOR[operator]
            for index, name in enumerate(names):
                self.variables.append(name)
                pattern += re.escape(separator if index else prefix)
                value = r".+?" if operator in ("+", "#") else r"[^/?#&,.]+" if operator == "." else r"[^/?#&,]+"
                pattern += rf"(?P<{name}>{value})"
        pattern += re.escape(template[position:])
        self.regex = re.compile(f"^{pattern}$")

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables of ``uri``, or None if the URI does not fit the template."""
        found = self.regex.match(uri)
        if found is None:
            return None
        values = {name: unquote(value) for name, value in found.groupdict().items()
                  if name != "__query" and value is not None}
        query = found.groupdict().get("__query")
        if query:
            for name, value in parse_qsl(query, keep_blank_values=True):
                if name in self.query_variables:
                    values[name] = value
        return values
