"""The library API that the CLI is a thin shell over, and that hosts and tests call directly: one
module per thing a user does (set a workspace up, run tasks, read its history, decide on skills,
use them elsewhere, learn from sessions, handle suites on their own), all of it importable from
here; a command that runs tasks starts one way (`command`). It may import every layer below it (`core` to `history`)."""

from ..history.rollback import rollback
from ..store.workspace import Workspace
from .decisions import accept, lock, reject, review, unlock
from .options import RunOptions
from .reading import (
    live_report,
    load_skills,
    prompt,
    report,
    round_log,
    search,
    show_round,
    show_skill,
    show_task,
    skill_usage,
    status,
)
from .running import audit, compare, estimate, evaluate, evolve, uplift
from .sessions import ingest, tasks_from_sessions
from .sharing import export, export_trajectories, lint, serve_mcp, skill_set, watch
from .suites import base_image, benchmarks, check_suite, export_tasks, harbor_suite, suite_network
from .workspaces import doctor, init_workspace, open_workspace

__all__ = [
    "Workspace",
    "RunOptions",
    "init_workspace",
    "open_workspace",
    "evolve",
    "estimate",
    "evaluate",
    "compare",
    "uplift",
    "audit",
    "status",
    "round_log",
    "show_task",
    "load_skills",
    "show_skill",
    "prompt",
    "rollback",
    "review",
    "accept",
    "reject",
    "lock",
    "unlock",
    "skill_set",
    "export",
    "export_trajectories",
    "lint",
    "watch",
    "search",
    "skill_usage",
    "show_round",
    "doctor",
    "benchmarks",
    "ingest",
    "tasks_from_sessions",
    "report",
    "live_report",
    "serve_mcp",
    "check_suite",
    "harbor_suite",
    "suite_network",
    "base_image",
    "export_tasks",
]
