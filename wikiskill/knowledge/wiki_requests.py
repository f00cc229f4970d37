"""What the wiki maintainer may ask of the wiki (pages to create and update, a line for the log)
and the part of the wiki it is shown: the wiki's side of its contract with the maintainer role,
so that the wiki applies a reply without importing the role that wrote it."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from .pages import PageKind
from .search import tokens


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)


class PageCreate(_Reply):
    name: str
    """Short lowercase slug with hyphens, e.g. `take-examine-move-loop` (no folder, no `.md`)."""
    title: str = ""
    """A short human title; empty = the page's first `#` heading."""
    kind: PageKind = PageKind.FAILURE
    """Whether the page explains a failure or a success."""
    summary: str = ""
    """One line for the index: the problem + its root cause + the fix (left out, the harness
    uses the Description's first sentence)."""
    evidence: list[str] = []
    """Task ids of the traces shown to you that show the pattern (at least one)."""
    content: str
    """The page as Markdown with the sections `## Description`, `## Root cause`, `## Evidence`
    (exact action sequences quoted with their task ids) and `## Fix` (the exact action sequence)."""
    skills: list[str] = []
    """Names of skills that address this pattern, if any."""


class PageUpdate(_Reply):
    name: str
    """The slug of an existing page."""
    summary: str | None = None
    """A new index line for the page; omit to keep the current one."""
    evidence: list[str] = []
    """Task ids of the traces shown to you that add evidence for the page."""
    add_evidence: str = ""
    """Markdown added at the end of the page's `## Evidence` section (new action sequences)."""
    edits: list[object] = []
    """Edits of the page's sections: {"op": "append"|"replace"|"insert_after", "target": "exact
    existing text", "content": "..."}; a target must be an exact substring of the current page."""
    skills: list[str] = []
    """Skills that address this pattern, added to the page's list."""


class MaintainerOutput(_Reply):
    """The maintainer's JSON reply. Unknown keys are ignored; `append_log` is required."""

    create_patterns: list[PageCreate] = []
    """New pattern pages."""
    update_patterns: list[PageUpdate] = []
    """Changes to existing pages."""
    append_log: str
    """A brief summary of this round's findings and actions for wiki/log.md."""


@dataclass
class WikiView:
    """The part of the wiki the maintainer sees: the index, recent log sections, and the pages
    most relevant to the sampled traces (`{slug: text}`)."""

    index: str
    log: str
    pages: dict[str, str]

    def tokens(self) -> int:
        return tokens("\n".join([self.index, self.log, *self.pages.values()]))
