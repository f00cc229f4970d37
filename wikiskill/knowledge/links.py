"""Markdown links: find them, and rewrite or drop them (code blocks and code spans untouched).

The lint checks and the harness share these patterns, so a link the harness writes is a link
the lint reads the same way."""

from __future__ import annotations

import re
from collections.abc import Callable

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[`~]*[ \t]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"(`+)[^\n]+?\1")
INLINE_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*(<[^>\n]*>|\S+).*$\n?", re.MULTILINE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")

Resolver = Callable[[str], "str | None"]
"""Given a link target, the target to write instead, or None to drop the link (its text stays)."""


def _unbracket(target: str) -> str:
    return target[1:-1] if target.startswith("<") else target


def links(text: str) -> list[str]:
    """Link targets of a Markdown text, code blocks and code spans excluded."""
    text = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = [m.group(3) for m in INLINE_LINK.finditer(text)] + [m.group(1) for m in REFERENCE.finditer(text)]
    return [_unbracket(target) for target in targets]


def rewrite_links(text: str, resolve: Resolver) -> str:
    """`text` with every link target passed through `resolve`; web links are left alone."""

    def inline(match: re.Match[str]) -> str:
        target = _unbracket(match.group(3))
        if SCHEME.match(target):
            return match.group(0)
        new = resolve(target)
        if new is None:
            return match.group(2)
        return match.group(0) if new == target else f"{match.group(1)}[{match.group(2)}]({new})"

    def reference(match: re.Match[str]) -> str:
        target = _unbracket(match.group(1))
        if SCHEME.match(target):
            return match.group(0)
        new = resolve(target)
        return "" if new is None else match.group(0).replace(match.group(1), new, 1)

    def prose(segment: str) -> str:
        return REFERENCE.sub(reference, INLINE_LINK.sub(inline, segment))

    return _outside(text, FENCE, lambda part: _outside(part, CODE_SPAN, prose))


def _outside(text: str, code: re.Pattern[str], change: Callable[[str], str]) -> str:
    parts, position = [], 0
    for match in code.finditer(text):
        parts += [change(text[position : match.start()]), match.group(0)]
        position = match.end()
    return "".join(parts + [change(text[position:])])
