"""The task agent's `read_wiki` tool (`agent.wiki_access: true`): the active pattern pages of a
ref's wiki, read by name, with the index when no page is named."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import ProposalError
from ..knowledge.pages import page_slug, read_pages

READ_WIKI_TOOL_NAME = "read_wiki"
READ_WIKI_TOOL = {
    "type": "function",
    "function": {
        "name": READ_WIKI_TOOL_NAME,
        "description": "Read a page of the wiki of failure and success patterns learned from earlier "
                       "tasks. Call it with an empty name to list the pages with their summaries.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The page's slug; empty for the list."}},
            "required": ["name"],
        },
    },
}


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
