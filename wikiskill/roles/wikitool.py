"""The task agent's `read_wiki` tool (`agent.wiki_access: true`): the active pattern pages of a
ref's wiki, read by name, with the index when no page is named (`knowledge.shelf.WikiShelf`)."""

from __future__ import annotations

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
