"""The commands that make task suites: `tasks from-sessions`, `tasks export`."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from .common import ApiBaseOption, console


def from_sessions(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(..., help="Session transcript files."),
    out: Path = typer.Option(..., "--out", help="The task suite's folder (created, or added to)."),
    session_format: str = typer.Option(
        ...,
        "--format",
        help="claude-code (a session .jsonl from "
        "~/.claude/projects/<project>/) or openai-messages (a JSON list of chat "
        "messages).",
    ),
    split: str = typer.Option("train", "--split", help="The split the tasks go to: train, val or test."),
    model: str | None = typer.Option(
        None,
        "--model",
        help="litellm model string of the model that drafts the "
        "rubrics (default: the workspace's judge, else its agent).",
    ),
    api_base: str | None = ApiBaseOption,
) -> None:
    """Draft task folders from real sessions, for a person to review before any suite uses them.

    Each session becomes OUT/SPLIT/<id>/: the user's first request as task.md, a rubric a model
    drafts from what the session shows the user accepted as rubric.md, and REVIEW.md, which keeps
    the suite from loading until a person has reviewed the task and deleted it. The model: --model,
    else the workspace's judge, else its agent. A bad file or a failed draft writes nothing."""
    result = api.tasks_from_sessions(files, out, session_format, split, model, api_base, ctx.find_root().obj)
    for path in result.skipped:
        console.print(f"skipped {path}: its task is already in {out}", markup=False, highlight=False, soft_wrap=True)
    for task in result.written:
        console.print(
            f"drafted {task.folder} ({task.criteria} criteria) from {task.source}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if result.written:
        console.print(
            f"Review each task, then delete its REVIEW.md: the suite will not load before "
            f"({result.usage.tokens} tokens, ${result.usage.cost_usd:.4f}).",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    else:
        console.print("Nothing new to draft.")


def export(
    suite: str = typer.Argument(..., help="The task-folder suite: its folder, or tasks:PATH."),
    out: Path = typer.Option(..., "--out", help="The folder to write (new, or empty)."),
    suite_format: str = typer.Option(..., "--format", help="harbor: one Harbor task folder per task."),
    base_image: str | None = typer.Option(
        None,
        "--base-image",
        help="The image every task's Dockerfile builds "
        "FROM (default: wikiskill/base:bookworm, from `wikiskill base-image`).",
    ),
) -> None:
    """Write a task-folder suite in another format: harbor, one task folder per task of every split.

    Each with instruction.md (task.md), task.toml (its split in [metadata]), environment/Dockerfile
    copying files/ into /app, and tests/test.sh running the suite's check there and writing the
    reward, hidden from the agent until Harbor copies tests/ in. The image needs what the check
    runs (pytest for a pytest check)."""
    result = api.export_tasks(suite, out, suite_format, base_image)
    counts = ", ".join(f"{split} {len(ids)}" for split, ids in result.tasks.items())
    console.print(
        f"Wrote {sum(map(len, result.tasks.values()))} Harbor task folders to {result.out} ({counts}).",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
