"""The `wikiskill` command: thin over `api` (parse, call, print), one module per group of commands
(`running`, `history`, `review`, `skills`, `tasks`, `environments`, `uplift`) over what they share (`common`). This
module lists the commands in the order `wikiskill --help` shows them. It may import every layer below it (`core` to
`api`)."""

from __future__ import annotations

from collections.abc import Callable

import typer

from . import environments, history, review, running, skills, tasks, uplift
from .common import Command, Commands, app, help_text

__all__ = ["app"]

COMMANDS: list[tuple[str, Callable[..., object]]] = [
    ("init", running.init),
    ("evolve", running.evolve),
    ("estimate", running.estimate_command),
    ("eval", running.eval_command),
    ("compare", running.compare_command),
    ("audit", running.audit_command),
    ("uplift", uplift.uplift_command),
    ("status", history.status),
    ("log", history.log),
    ("prompt", skills.prompt),
    ("rollback", history.rollback_command),
    ("review", review.review_command),
    ("accept", review.accept_command),
    ("reject", review.reject_command),
    ("lock", review.lock_command),
    ("unlock", review.unlock_command),
    ("show", history.show_command),
    ("doctor", running.doctor_command),
    ("benchmarks", running.benchmarks_command),
    ("check-suite", running.check_suite_command),
    ("export", skills.export_command),
    ("mcp", skills.mcp_command),
    ("lint", skills.lint_command),
    ("search", skills.search_command),
    ("watch", skills.watch_command),
    ("ingest", skills.ingest_command),
    ("export-trajectories", skills.export_trajectories_command),
    ("report", history.report_command),
    ("base-image", environments.base_image_command),
]
for name, command in COMMANDS:
    app.command(name, cls=Command, help=help_text(command))(command)

skills_app = typer.Typer(cls=Commands, invoke_without_command=True)
skills_app.callback(help=help_text(skills.skills))(skills.skills)
skills_app.command("show", cls=Command, help=help_text(skills.skills_show))(skills.skills_show)
app.add_typer(skills_app, name="skills")

tasks_app = typer.Typer(
    cls=Commands, no_args_is_help=True, help="Make task suites: drafts from real sessions, other formats."
)
tasks_app.command("from-sessions", cls=Command, help=help_text(tasks.from_sessions))(tasks.from_sessions)
tasks_app.command("export", cls=Command, help=help_text(tasks.export))(tasks.export)
app.add_typer(tasks_app, name="tasks")
