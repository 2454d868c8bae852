"""
Check every internal link of a built HTML site: each relative ``href`` (and ``src``) must name a
file of the site, and its ``#fragment`` an ``id`` in that file. ``scripts/docs --check`` runs it
after the build.

Sphinx already warns about unresolved roles, toctree entries and MyST links to missing pages, and
``-W`` turns those into errors; this catches what reaches the HTML without passing through them
(a raw link in a page, an anchor a template renders). External links are not checked: the build
runs offline.

Usage: ``python docs/_ext/check_links.py docs/_build/html``; exit 1 when a link is broken.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

# Pages Sphinx writes whose links point at files it does not copy (the source viewer).
SKIP_PAGES = ("_sources/", "_static/")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            elif name in ("href", "src") and value and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def broken_links(root: Path) -> list[str]:
    """``page: link (why)`` for every internal link that leads nowhere."""
    pages = {path: _parse(path) for path in sorted(root.rglob("*.html"))
             if not str(path.relative_to(root)).startswith(SKIP_PAGES)}
    problems = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            fragment = urldefrag(link)[1]
            # The path alone: Sphinx adds ?v=<hash> to its static files.
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(root)}: {link}"
            if not target.exists():
                problems.append(f"{where} (no such file)")
            elif fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(fragment) not in ids:
                    problems.append(f"{where} (no #{fragment} in {target.relative_to(root)})")
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else "docs/_build/html").resolve()
    if not (root / "index.html").exists():
        print(f"check_links: {root} holds no built site (run scripts/docs first)", file=sys.stderr)
        return 2
    problems = broken_links(root)
    for problem in problems:
        print(f"check_links: broken link in {problem}", file=sys.stderr)
    count = sum(1 for _ in root.rglob("*.html"))
    print(f"check_links: {count} pages, {len(problems)} broken internal links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
