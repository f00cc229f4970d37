"""`wikiskill mcp`: the accepted skills served to any MCP host (Claude Code, Codex, Cursor, ...).

Tools: `list_skills`, `load_skill(name)`, `search(query, corpus)` and `skills_prompt(task, mode)`;
each skill is also a resource, `skill://<name>` (its SKILL.md). Every request first checks the tip
of the served ref (one tree-id lookup through the Workspace; the skills are re-read only when
that tree changed), so a skill the gate merges is served on the next request, without a restart.

Handlers are coroutines on purpose: they all run on the server's one event loop thread, one at a
time, because the workspace's git readers must not be used from two threads at once.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import Resource
from pydantic import BaseModel

from .. import __version__
from ..core.errors import WikiskillError
from .host import Mode, SkillSet
from .lookup import Corpus, Hit

SKILL_URI = "skill://{name}"
HTTP_PATH = "/mcp"


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"
    """Streamable HTTP, served at `http://HOST:PORT/mcp`."""


class SkillSummary(BaseModel):
    name: str
    description: str
    uri: str
    """The skill's resource (its SKILL.md)."""


class SkillsServer(MCPServer):
    """An MCP server over a `SkillSet` that re-reads the set's ref on every request."""

    def __init__(self, skills: SkillSet, log_level: Literal["INFO", "WARNING"] = "WARNING"):
        super().__init__(
            "wikiskill",
            version=__version__,
            log_level=log_level,
            instructions=(
                "Skills evolved by wikiskill from this workspace's own runs and merged only when they "
                f"improved validation, read live at {skills.ref}. Call list_skills (or skills_prompt with "
                "the task) and load_skill for the skill that fits the task before you act."
            ),
        )
        self.skills = skills
        self.add_tool(self.list_skills)
        self.add_tool(self.load_skill)
        self.add_tool(self.search)
        self.add_tool(self.skills_prompt)
        self.resource(
            SKILL_URI, name="skill", mime_type="text/markdown", description="A skill's SKILL.md at the served ref."
        )(self.read_skill)

    def current(self) -> SkillSet:
        """The skill set, re-read when the ref's skills changed since the last request."""
        try:
            self.skills.refresh()
        except WikiskillError as exc:
            raise ToolError(str(exc)) from None
        return self.skills

    async def list_skills(self) -> list[SkillSummary]:
        """Every skill at the served ref: name and description (when to use it)."""
        return [
            SkillSummary(name=skill.name, description=skill.description, uri=SKILL_URI.format(name=skill.name))
            for skill in self.current().skills
        ]

    async def load_skill(self, name: str) -> str:
        """The full instructions of one skill, by name."""
        try:
            return self.current().get(name.strip()).body
        except WikiskillError as exc:
            raise ToolError(str(exc)) from None

    async def search(self, query: str, corpus: Corpus = Corpus.SKILLS, limit: int = 10) -> list[Hit]:
        """Ranked matches (BM25) for `query` in the skills, the wiki's pattern pages or the latest train
        traces: each hit's path, score and best-matching line."""
        return self.current().search(query, corpus.value, limit)

    async def skills_prompt(self, task: str = "", mode: Mode | None = None) -> str:
        """The skills block for a system prompt (what `wikiskill prompt` prints): `full` (every skill's
        instructions), `index` (names and descriptions; load bodies with load_skill) or `retrieve` (the
        skills most relevant to `task`); default: the workspace's `skills.mode`."""
        try:
            return self.current().render(task, mode)
        except WikiskillError as exc:
            raise ToolError(str(exc)) from None

    async def read_skill(self, name: str) -> str:
        try:
            return self.current().get(name).text
        except (ToolError, WikiskillError) as exc:
            raise ResourceNotFoundError(str(exc)) from None

    async def list_resources(self) -> list[Resource]:
        """One resource per skill at the ref's current tip (the SDK lists only fixed resources)."""
        return [
            Resource(
                uri=SKILL_URI.format(name=skill.name),
                name=skill.name,
                description=skill.description,
                mime_type="text/markdown",
            )
            for skill in self.current().skills
        ]


def serve(skills: SkillSet, over: Transport = Transport.STDIO, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve until the host disconnects (stdio) or the process is interrupted (http)."""
    if over == Transport.STDIO:
        SkillsServer(skills).run("stdio")
    else:  # at INFO, uvicorn says where it listens and logs each request, as any HTTP server in a terminal
        SkillsServer(skills, log_level="INFO").run(
            "streamable-http", host=host, port=port, streamable_http_path=HTTP_PATH
        )
