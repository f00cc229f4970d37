"""Commit subjects that fit git's one-line views: at most 72 characters, cut only where a
clause ends, so `git log --oneline` never shows half a parenthesis; the words that did not fit
go first in the commit's body."""

from __future__ import annotations

SUBJECT_LIMIT = 72
ELLIPSIS = "…"


def subject_and_body(subject: str, body: str) -> tuple[str, str]:
    """The commit's subject line and body: a subject cut by `short_subject` keeps its words in
    the body, as its first paragraph, unless the body already says what was cut."""
    whole = " ".join(subject.split())
    short = short_subject(whole)
    body = body.strip()
    cut = whole[len(short.removesuffix(ELLIPSIS)) :].strip(" ,;")
    if cut.startswith("(") and cut.endswith(")"):
        cut = cut[1:-1]
    if short != whole and cut not in body:
        body = f"{whole}\n\n{body}".strip()
    return short, body


def short_subject(subject: str) -> str:
    """`subject` if it fits, else its longest whole-clause prefix that does: trailing
    parentheticals go first, then trailing `; ` and `, ` clauses, then (for a subject that is
    one long clause) trailing words or parts of a hyphenated name, marked with an ellipsis."""
    text = " ".join(subject.split())
    while len(text) > SUBJECT_LIMIT:
        shorter = _without_last_clause(text)
        if shorter is None:
            return _cut_words(text)
        text = shorter
    return text


def _without_last_clause(text: str) -> str | None:
    """`text` less its trailing parenthetical, or else less its last top-level `; ` or `, `
    clause; None when it is one clause."""
    if text.endswith(")"):
        opening = _opening_of_last_group(text)
        if opening is not None and text[:opening].strip():
            return text[:opening].rstrip()
    for separator in ("; ", ", "):
        cut = _last_top_level(text, separator)
        if cut is not None:
            return text[:cut].rstrip()
    return None


def _opening_of_last_group(text: str) -> int | None:
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        if text[index] == ")":
            depth += 1
        elif text[index] == "(":
            depth -= 1
            if depth == 0:
                return index
    return None


def _last_top_level(text: str, separator: str) -> int | None:
    depth, found = 0, None
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and index > 0 and text.startswith(separator, index):
            found = index
    return found


def _cut_words(text: str) -> str:
    room = SUBJECT_LIMIT - len(ELLIPSIS)
    head = text[:room]
    boundary = max(head.rfind(" "), head.rfind("-") + 1)
    if boundary > room // 2:
        head = head[:boundary]
    return head.rstrip(" ,;:(") + ELLIPSIS
