"""Using the skills elsewhere: the host API, export as Agent Skills folders, the MCP server, and
lint and watch over hand edits; and a round's trajectories exported as ATIF for other tools."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..store.traces import TrajectorySplit
from ..store.workspace import Workspace

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from ..integrations.export import ExportResult
    from ..integrations.host import SkillSet
    from ..integrations.watch import WatchReport
    from ..knowledge.lint import Problem


def skill_set(path: Path | None = None, ref: str | None = "main", mode: str | None = None) -> SkillSet:
    """The skills of a workspace for a host agent (see wikiskill.integrations.host); ref=None: working tree."""
    from ..integrations.host import SkillSet

    return SkillSet.open(path, ref, mode)


def export(ws: Workspace, dest: Path, ref: str = "main", target: str = "agents") -> ExportResult:
    """Write the skills at `ref` as Agent Skills folders (idempotent): into `dest` itself (`agents`),
    or into the folder Claude Code (`claude`: dest/.claude/skills) or Codex (`codex`:
    dest/.agents/skills) reads under the project or home folder `dest`."""
    from ..integrations.export import export_skills
    from ..integrations.export_targets import export_target

    return export_skills(ws, dest, ref, export_target(target))


def export_trajectories(
    ws: Workspace, round_number: int, out: Path, splits: list[TrajectorySplit] | None = None
) -> list[Path]:
    """Write round `round_number`'s trajectories (its train tasks' and the sessions ingested for it,
    or `splits` of them) as ATIF v1.8 files under `out/<split>/<task id>.json`, each validated by the
    `atif` models; nothing is written when one does not validate."""
    from ..integrations.atif_out import export_trajectories as _export

    return _export(ws, round_number, splits or list(TrajectorySplit), out)


def serve_mcp(
    ws: Workspace, ref: str = "main", transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000
) -> None:
    """Serve the skills at `ref` to MCP hosts until they disconnect (see wikiskill.integrations.mcp_server); every
    request reads the ref's current tip, so a skill the gate merges is served without a restart."""
    from ..core.errors import choice
    from ..integrations.host import SkillSet
    from ..integrations.mcp_server import Transport, serve

    over = choice(Transport, transport, "transport")
    serve(SkillSet(ws, ref), over, host, port)


def lint(ws: Workspace) -> list[Problem]:
    """Problems of skills/ and wiki/ in the working tree (uncommitted edits included), held-out
    text in a skill among them."""
    from ..knowledge.leakage import workspace_held_out
    from ..knowledge.lint import lint_workspace, working_files

    leaks = workspace_held_out(ws.root).problems(working_files(ws.root, "skills"))
    return sorted(set(lint_workspace(ws.root) + leaks))


def watch(
    ws: Workspace,
    on_report: Callable[[WatchReport], None],
    commit: bool = False,
    stop: threading.Event | None = None,
    timeout: float | None = None,
) -> None:
    """Lint every burst of saves under skills/ and wiki/; with `commit`, commit the valid edits."""
    from ..integrations.watch import watch as _watch

    _watch(ws, on_report, commit=commit, stop=stop, timeout=timeout)
