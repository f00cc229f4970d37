"""Consolidation of the wiki: merge duplicate pages and retire stale ones.

A pure function over the committed files: it returns the file changes and what it did; the
harness commits them as a `consolidate` step. A merged page stays, marked `merged` and pointing
to the page it went into, and every link to it (other pages, the index, skills' PURPOSE.md) is
rewritten to that page. Which pages are duplicates is a `DuplicateRule`: word overlap for pages a
model wrote, pattern coverage for the offline maintainer's pages (wikiskill/roles/offline/).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Protocol

from .links import Resolver, rewrite_links
from .pages import Page, PageStatus, Section, page_path, read_pages
from .search import overlap
from .settings import WikiSettings
from .wiki import INDEX, render_index, render_page, resolve


class DuplicateRule(Protocol):
    def keeper(self, a: Page, b: Page) -> Page | None:
        """The page to keep when `a` and `b` say the same thing; None when they do not."""


@dataclass(frozen=True)
class WordOverlap:
    """Pages of the same kind whose title, summary and fix share at least `threshold` of their
    words (Jaccard); the one with more evidence is kept."""

    threshold: float

    def keeper(self, a: Page, b: Page) -> Page | None:
        if a.meta.kind != b.meta.kind or overlap(_text(a), _text(b)) < self.threshold:
            return None
        return min(a, b, key=lambda page: (-len(page.meta.tasks()), page.meta.first_seen, page.slug))


def _text(page: Page) -> str:
    return f"{page.meta.title} {page.meta.summary} {page.sections.get(Section.FIX, '')}"


@dataclass
class Consolidation:
    changes: dict[str, str | None] = field(default_factory=dict)
    merged: list[tuple[str, str]] = field(default_factory=list)
    """(merged page, page it went into)."""
    retired: list[str] = field(default_factory=list)


def consolidate(
    wiki_files: dict[str, str],
    skill_files: dict[str, str],
    round_number: int,
    settings: WikiSettings,
    rule: DuplicateRule,
) -> Consolidation:
    """`wiki_files` and `skill_files` are `{path under wiki/ or skills/: text}`."""
    before = read_pages(wiki_files)
    pages = dict(before)
    result = Consolidation()
    for slug, page in sorted(pages.items()):
        if page.active and page.meta.last_seen <= round_number - settings.retire_after:
            pages[slug] = _with_meta(page, status=PageStatus.RETIRED, retired_in=round_number)
            result.retired.append(slug)
    _merge_duplicates(pages, rule, result)
    for slug, page in pages.items():
        text = render_page(page, pages)
        if text != wiki_files.get(f"patterns/{slug}.md"):
            result.changes[page_path(slug)] = text
    if result.merged or result.retired:
        result.changes[INDEX] = render_index(pages)
    merged = {slug for slug, _ in result.merged}
    for path, text in sorted(skill_files.items()):
        if path.endswith(".md"):
            new = rewrite_links(text, _skill_link_resolver(f"skills/{path}", pages, merged))
            if new != text:
                result.changes[f"skills/{path}"] = new
    return result


def _with_meta(page: Page, **update: object) -> Page:
    return page.model_copy(update={"meta": page.meta.model_copy(update=update)})


def _merge_duplicates(pages: dict[str, Page], rule: DuplicateRule, result: Consolidation) -> None:
    """Merge pairs until no two active pages are duplicates (each merge removes one)."""
    merged = True
    while merged:
        merged = False
        active = sorted(slug for slug, page in pages.items() if page.active)
        for index, first in enumerate(active):
            for second in active[index + 1 :]:
                keeper = rule.keeper(pages[first], pages[second])
                if keeper is None:
                    continue
                gone = second if keeper.slug == first else first
                pages[keeper.slug] = _absorb(pages[keeper.slug], pages[gone])
                pages[gone] = _with_meta(pages[gone], status=PageStatus.MERGED, merged_into=keeper.slug)
                result.merged.append((gone, keeper.slug))
                merged = True
                break
            if merged:
                break


def _absorb(keeper: Page, gone: Page) -> Page:
    """The kept page with the other page's evidence, evidence lines and skills."""
    lines = keeper.sections.get(Section.EVIDENCE, "").splitlines()
    extra = [
        line for line in gone.sections.get(Section.EVIDENCE, "").splitlines() if line.strip() and line not in lines
    ]
    sections = {**keeper.sections, Section.EVIDENCE: "\n".join([*lines, *extra]).strip()}
    page = keeper.model_copy(update={"sections": sections}).with_evidence(gone.meta.evidence)
    return _with_meta(page, skills=sorted(set(page.meta.skills) | set(gone.meta.skills)))


def _skill_link_resolver(path: str, pages: dict[str, Page], merged: set[str]) -> Resolver:
    """Links from a skill file to a merged page go to the page it was merged into."""
    folder = posixpath.dirname(path)

    def resolver(target: str) -> str:
        local, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(folder, local))
        slug = resolved.removeprefix("wiki/patterns/").removesuffix(".md")
        if not resolved.startswith("wiki/patterns/") or slug not in merged:
            return target
        new = posixpath.relpath(page_path(resolve(pages, slug)), folder)
        return f"{new}#{anchor}" if anchor else new

    return resolver
