"""BM25 ranking over short documents (wiki pages, skills, traces), with bm25s."""

from __future__ import annotations

import logging
import re

CHARS_PER_TOKEN = 4
"""The rough size of a token in characters, for budgets (no tokenizer is loaded for this)."""


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def rank(documents: list[str], query: str) -> list[tuple[int, float]]:
    """(document index, score) best first; ties keep document order. All documents are returned
    (score 0 when nothing matches), so a caller can fill a budget past the matching ones."""
    corpus = [words(text) for text in documents]
    terms = words(query)
    if not documents or not terms or not any(corpus):
        return [(index, 0.0) for index in range(len(documents))]
    import bm25s

    # bm25s sets DEBUG on itself; a host's log would show each index
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    scores = retriever.get_scores(terms)
    return sorted(((index, float(scores[index])) for index in range(len(documents))), key=lambda item: -item[1])


def tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


def overlap(first: str, second: str) -> float:
    """The share of words two texts have in common (Jaccard over their word sets); 0 when empty."""
    a, b = set(words(first)), set(words(second))
    return len(a & b) / len(a | b) if a and b else 0.0
