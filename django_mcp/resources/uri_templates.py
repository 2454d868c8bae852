"""
Matching URIs against RFC 6570 templates, for ``resources/read`` of templated resources.

Expressions supported: ``{var}`` (one path segment), ``{+var}`` and ``{#var}`` (reserved
expansion, may span ``/``), ``{/var}`` and ``{.var}`` (prefixed segments), and ``{?a,b}`` /
``{&a}`` (query parameters, optional, any order).

Values are percent-decoded after matching (RFC 3986 section 2.1), so what a resource function
receives is not what the matching saw: ``..%2F..%2Fetc%2Fpasswd`` fits ``{id}`` as one segment and
decodes to a path. A match is therefore refused — the URI names nothing, and ``resources/read``
answers resource-not-found — when a decoded value

- holds a control character (NUL included) or is not UTF-8, for every expression;
- holds ``/`` or ``\\``, or is ``.`` or ``..``, for the one-segment expressions (``{var}``,
  ``{/var}``, ``{.var}``): the value must stay the one segment the template shows;
- has a ``..`` segment, for reserved expansion (``{+var}``, ``{#var}``) and query values, which
  may span segments but never climb out of them.

Variables named in ``opaque`` are identifiers the server looks up (a database key, a slug), never
a path: they keep ``/``, ``\\`` and dots, and only the first rule applies to them.
"""

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote

_EXPRESSION = re.compile(r"\{([+#./?&]?)([A-Za-z0-9_.,%]+)\}")

_PREFIX_AND_SEPARATOR = {"": ("", ","), "+": ("", ","), "#": ("#", ","), "/": ("/", "/"), ".": (".", ".")}
# Unicode's control characters (category Cc): C0, DEL and C1.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SEPARATORS = re.compile(r"[/\\]")
_RESERVED_OPERATORS = frozenset({"+", "#"})
_QUERY_OPERATORS = frozenset({"?", "&"})


def _decode(raw: str) -> str | None:
    """The percent-decoded value, or None when its bytes are not UTF-8."""
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return None


def _climbs(value: str) -> bool:
    """Whether a value spanning segments has a ``..`` segment (RFC 3986 section 5.2.4 would remove it)."""
    return ".." in _SEPARATORS.split(value)


def _leaves_its_segment(value: str) -> bool:
    """Whether a one-segment value is more or less than one segment once decoded."""
    return value in (".", "..") or _SEPARATORS.search(value) is not None


class UriTemplate:
    """A compiled template: ``match(uri)`` gives the variables, or None."""

    def __init__(self, template: str, *, opaque: Iterable[str] = ()) -> None:
        self.template = template
        self.variables: list[str] = []
        self.query_variables: list[str] = []
        self.opaque = frozenset(opaque)
        # The operator of each path variable: it decides which decoded values are safe.
        self.operators: dict[str, str] = {}
        pattern = ""
        position = 0
        for match in _EXPRESSION.finditer(template):
            pattern += re.escape(template[position:match.start()])
            operator, names = match.group(1), match.group(2).split(",")
            position = match.end()
            if operator in _QUERY_OPERATORS:
                self.query_variables.extend(names)
                pattern += r"(?:[?&](?P<__query>.*))?" if "__query" not in pattern else ""
                continue
            # RFC 6570 §3.2: each operator has a prefix before the first value and a separator
            # between values ("," for simple and reserved, "/" for path, "." for label).
            prefix, separator = _PREFIX_AND_SEPARATOR[operator]
            for index, name in enumerate(names):
                self.variables.append(name)
                self.operators[name] = operator
                pattern += re.escape(separator if index else prefix)
                value = r".+?" if operator in ("+", "#") else r"[^/?#&,.]+" if operator == "." else r"[^/?#&,]+"
                pattern += rf"(?P<{name}>{value})"
        pattern += re.escape(template[position:])
        self.regex = re.compile(f"^{pattern}$")

    def match(self, uri: str) -> dict[str, str] | None:
        """
        The decoded template variables of ``uri``, or None if the URI does not fit the template
        or a decoded value is unsafe (see the module's docstring).
        """
        found = self.regex.match(uri)
        if found is None:
            return None
        values: dict[str, str] = {}
        for name, raw in found.groupdict().items():
            if name == "__query" or raw is None:
                continue
            value = _decode(raw)
            if value is None or not self.acceptable(name, value, self.operators[name]):
                return None
            values[name] = value
        query = found.groupdict().get("__query")
        if query:
            try:
                pairs = parse_qsl(query, keep_blank_values=True, errors="strict")
            except UnicodeDecodeError:
                return None
            for name, value in pairs:
                if name in self.query_variables:
                    if not self.acceptable(name, value, "?"):
                        return None
                    values[name] = value
        return values

    def acceptable(self, name: str, value: str, operator: str) -> bool:
        """Whether the decoded ``value`` of variable ``name`` (of ``operator``'s kind) may reach a resource."""
        if _CONTROL.search(value):
            return False
        if name in self.opaque:
            return True
        if operator in _RESERVED_OPERATORS or operator in _QUERY_OPERATORS:
            return not _climbs(value)
        return not _leaves_its_segment(value)
