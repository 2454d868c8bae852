"""
Ranking tool definitions against a search query: BM25 over weighted fields (a tool's name, title,
argument names, description and argument descriptions), the scoring full-text engines use, so a
word that few tools carry counts more than one that many do, and a long description does not win
by length alone.

Words are matched after the same normalisation on both sides: ``send_email``, ``sendEmail`` and
"send emails" all give ``send``, ``email``; a light suffix stemming (plurals, -ing, -ed) lets
"lending" find ``lend_book``. No language model and no index on disk: a catalogue of a few hundred
tools is ranked in milliseconds, per request, over exactly the tools that request may see.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: How much a word counts in each field: a tool's name says most about what it does.
FIELD_WEIGHTS = {"name": 3.0, "title": 2.0, "arguments": 1.5, "description": 1.0, "argument_text": 0.5}
#: BM25's term-frequency saturation and length normalisation (the usual values).
K1, B = 1.2, 0.75
#: Words too common in tool descriptions to tell tools apart.
STOPWORDS = frozenset("""a an and are as at be by for from get has have if in into is it its of on or
that the this to was were will with you your one all any can may do does not no i me my we our
want need please some who what which when where how""".split())

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """
    A light English stem: enough for plurals and -ing/-ed forms, never below three letters. A
    final e goes too, so "change", "changes", "changed" and "changing" meet at "chang".
    """
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: len(word) - len(suffix)] + keep
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def words(text: str) -> list[str]:
    """The normalised words of ``text``: split at case changes, underscores and punctuation, stemmed."""
    if not text:
        return []
    spaced = _CAMEL.sub(" ", text).lower()
    return [stem(word) for word in _WORD.findall(spaced) if word not in STOPWORDS]


def field_texts(definition: dict[str, Any]) -> dict[str, str]:
    """The text of a ``tools/list`` entry, per field of :data:`FIELD_WEIGHTS`."""
    properties = (definition.get("inputSchema") or {}).get("properties") or {}
    if not isinstance(properties, dict):
        properties = {}
    argument_text = " ".join(f"{spec.get('description', '')} {spec.get('title', '')}"
                             for spec in properties.values() if isinstance(spec, dict))
    annotations = definition.get("annotations") or {}
    return {
        "name": str(definition.get("name", "")),
        "title": str(definition.get("title") or annotations.get("title") or ""),
        "arguments": " ".join(str(name) for name in properties),
        "description": str(definition.get("description") or ""),
        "argument_text": argument_text,
    }


@functools.lru_cache(maxsize=32768)
def counted(text: str) -> tuple[Counter[str], int]:
    """
    The words of ``text`` counted, and how many there are. Kept: the same descriptions come back
    with every search, and splitting them is most of a search's work. Never changed by callers.
    """
    found = words(text)
    return Counter(found), len(found)


@dataclass(frozen=True)
class Match:
    """A tool definition that matched, with its score (higher is better)."""

    score: float
    definition: dict[str, Any]


def rank(query: str, definitions: Sequence[dict[str, Any]], limit: int) -> tuple[list[Match], int]:
    """
    The ``limit`` best matches of ``query`` among ``definitions``, best first (ties by name), and
    how many matched at all. A query word that no tool carries is ignored; a query with no word
    left matches nothing.
    """
    terms = list(dict.fromkeys(words(query)))
    if not terms or not definitions:
        return [], 0
    documents = [{field: counted(text) for field, text in field_texts(definition).items()}
                 for definition in definitions]
    average = {field: (sum(document[field][1] for document in documents) / len(documents)) or 1.0
               for field in FIELD_WEIGHTS}
    frequency = {term: sum(1 for document in documents if any(document[field][0][term] for field in FIELD_WEIGHTS))
                 for term in terms}
    total = len(documents)
    query_name = "_".join(terms)
    matches = []
    for definition, document in zip(definitions, documents):
        score = 0.0
        for term in terms:
            if not frequency[term]:
                continue
            # BM25F: the field-weighted, length-normalised frequency, saturated once.
            weighted = 0.0
            for field, weight in FIELD_WEIGHTS.items():
                found, length = document[field]
                if found[term]:
                    weighted += weight * found[term] / (1 - B + B * length / average[field])
            if weighted:
                idf = math.log(1 + (total - frequency[term] + 0.5) / (frequency[term] + 0.5))
                score += idf * weighted * (K1 + 1) / (weighted + K1)
        if score:
            if query_name == "_".join(words(str(definition.get("name", "")))):
                score *= 2  # the query is the tool's name
            matches.append(Match(score, definition))
    matches.sort(key=lambda match: (-match.score, str(match.definition.get("name", ""))))
    return matches[:limit], len(matches)
