"""A skill's PURPOSE.md as the harness keeps it: one Evolution History line per change, and the
wiki's pattern pages the skill addresses."""

from __future__ import annotations

import re

from .pages import Page, page_slug
from .wiki import resolve

HISTORY = "## Evolution History"


def add_history(purpose: str, round_number: int, line: str) -> str:
    """Append a line to PURPOSE.md's Evolution History (adding the section when missing)."""
    entry = f"- r{round_number:03d} {line}"
    text = purpose.rstrip()
    if HISTORY.lower() not in text.lower():
        text += f"\n\n{HISTORY}\n"
    return f"{text}\n{entry}\n"


PATTERNS_ADDRESSED = "## Patterns Addressed"
_PAGE_MENTION = re.compile(r"wiki/patterns/([A-Za-z0-9_-]+)")


def addressed_pages(purpose: str, rationale: str, name: str, pages: dict[str, Page]) -> list[str]:
    """Active pages a skill addresses: linked from its PURPOSE.md, named in the rationale, or
    listing the skill in their front matter (merged pages count as the page they went into)."""
    named = set(_PAGE_MENTION.findall(f"{purpose}\n{rationale}"))
    named |= {slug for slug, page in pages.items() if name in page.meta.skills}
    slugs = {resolve(pages, page_slug(slug)) for slug in named if re.search(r"[A-Za-z0-9]", slug)}
    return sorted(slug for slug in slugs if slug in pages and pages[slug].active)


def record_decision(
    purpose: str,
    name: str,
    round_number: int,
    action: str,
    decision: str,
    candidate: float,
    incumbent: float,
    addressed: list[str],
    pages: dict[str, Page],
    effect: str,
) -> str:
    """PURPOSE.md after the gate: Patterns Addressed rebuilt from the wiki, and one Evolution
    History line with the round, action, decision, scores and `effect`, the gate's words for the
    val tasks it helped and hurt (the same as in skill-impact.md)."""
    lines = [
        f"- [{pages[slug].meta.title}](../../wiki/patterns/{slug}.md): {pages[slug].meta.summary}" for slug in addressed
    ] or ["(no wiki page linked)"]
    text = replace_section(purpose or f"# {name}\n", PATTERNS_ADDRESSED, "\n".join(lines))
    line = f"{action} {decision}: val {candidate:.3f}, incumbent {incumbent:.3f}; {effect}"
    return add_history(text, round_number, line)


def replace_section(text: str, heading: str, body: str) -> str:
    """`text` with the section under `heading` replaced (added before Evolution History when missing)."""
    pattern = re.compile(
        rf"^{re.escape(heading)}[ \t]*\n(.*?)(?=^#{{1,2}} |\Z)", re.MULTILINE | re.DOTALL | re.IGNORECASE
    )
    section = f"{heading}\n\n{body.strip()}\n\n"
    if pattern.search(text):
        return pattern.sub(lambda match: section, text, count=1).rstrip() + "\n"
    history = text.lower().find(HISTORY.lower())
    if history == -1:
        return f"{text.rstrip()}\n\n{section}".rstrip() + "\n"
    return f"{text[:history]}{section}{text[history:]}"
