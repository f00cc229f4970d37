"""The wiki as a task agent may read it (`agent.wiki_access: true`): the active pattern pages of a
ref's wiki by slug, and an index of their summaries."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import ProposalError
from .pages import page_slug, read_pages


@dataclass(frozen=True)
class WikiShelf:
    pages: dict[str, str] = field(default_factory=dict)
    """`{slug: page text}` of the active pages."""
    index: str = ""

    @classmethod
    def from_files(cls, files: dict[str, str]) -> WikiShelf:
        """From `{path under wiki/: text}`."""
        pages = {slug: page for slug, page in read_pages(files).items() if page.active}
        index = "\n".join(f"- {slug}: {page.meta.summary}" for slug, page in sorted(pages.items()))
        return cls({slug: files[f"patterns/{slug}.md"] for slug in pages}, index)

    def read(self, name: object) -> str:
        """What the tool returns to the agent."""
        if not isinstance(name, str) or not name.strip():
            return self.index or "The wiki has no pages yet."
        try:
            slug = page_slug(name)
        except ProposalError:
            slug = ""
        return self.pages.get(slug) or f"No wiki page named {name[:60]!r}. Pages:\n{self.index or '(none)'}"
