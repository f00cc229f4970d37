"""Reading a workspace's history and skills from git: status, the round log, a round's story, a
task's transcript, the skills at a ref, their usage, search, and the HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import WikiskillError
from ..history.status import RoundRow, Status, round_rows
from ..history.status import status as _status
from ..history.transcript import TaskView, task_view
from ..knowledge.skills import Skill
from ..knowledge.skills import load_skills as _load_skills
from ..knowledge.skillsblock import render_skills
from ..store.settings import load_config
from ..store.workspace import Workspace

if TYPE_CHECKING:
    from ..history.live import LiveReportServer
    from ..history.roundstory import RoundStory
    from ..integrations.lookup import Hit
    from ..loop.usage import SkillUsage


def status(ws: Workspace) -> Status:
    return _status(ws)


def round_log(ws: Workspace) -> list[RoundRow]:
    load_config(ws.root)  # refused like `status`: a broken wikiskill.yaml is never silently read past
    return round_rows(ws)


def show_task(ws: Workspace, round_number: int, task_id: str) -> TaskView:
    """One task of a round as the agent lived it (`wikiskill show ROUND --task ID`)."""
    return task_view(ws, round_number, task_id)


def show_round(ws: Workspace, round_number: int) -> RoundStory:
    """What happened in a round: traces sampled, pages changed, the proposer's reads and proposal
    (or why it was invalid), the per-task validation and the decision, all read from git."""
    from ..history.roundstory import round_story

    return round_story(ws, round_number)


def load_skills(ws: Workspace, ref: str = "main") -> list[Skill]:
    """The skills at any git ref (main by default)."""
    ws.resolve(ref)
    return _load_skills(ws.read_files(ref, "skills"))


def show_skill(ws: Workspace, name: str, ref: str = "main") -> str:
    files = ws.read_files(ref, f"skills/{name}")
    if "SKILL.md" not in files:
        raise WikiskillError(f"no skill named {name!r} at {ref}")
    purpose = files.get("PURPOSE.md", "")
    return files["SKILL.md"] + (f"\n---- PURPOSE.md ----\n{purpose}" if purpose else "")


def prompt(ws: Workspace, task: str = "", mode: str | None = None, ref: str = "main") -> str:
    """The skills block for a system prompt, in the workspace's mode or the one given."""
    settings = load_config(ws.root).skills.with_mode(mode)
    return render_skills(load_skills(ws, ref), settings, task)


def skill_usage(ws: Workspace, ref: str = "main") -> dict[str, SkillUsage]:
    """Per skill: train prompts it reached, and the tasks its changes helped and hurt."""
    from ..loop.usage import skill_usage as _skill_usage

    ws.resolve(ref)
    return _skill_usage(ws, ref)


def search(ws: Workspace, query: str, corpus: str = "wiki", ref: str | None = "main", limit: int = 10) -> list[Hit]:
    """Ranked hits (BM25) for `query` in the wiki's pages, the skills, or the latest train traces."""
    from ..integrations.lookup import corpus as _corpus
    from ..integrations.lookup import search as _search

    if ref is not None:
        ws.resolve(ref)
    return _search(ws, query, _corpus(corpus), ref, limit)


def report(ws: Workspace, out: Path) -> Path:
    """Write the workspace's evolution (val scores, cost, skills timeline, wiki growth, the latest
    validation per task) as one static HTML page at `out`; returns its path."""
    from ..history.htmlreport import write_report

    load_config(ws.root)
    return write_report(ws, out)


def live_report(ws: Workspace, port: int) -> LiveReportServer:
    """The report served on 127.0.0.1:`port` (0: any free port), refreshed in the browser as the
    steps of a running `evolve` land; it only reads the workspace. Bound here (a port in use is
    refused in one line); `serve_forever()` serves it until interrupted, `server_close()` ends it."""
    from ..history.live import LiveReportServer

    load_config(ws.root)
    return LiveReportServer(ws, port)
