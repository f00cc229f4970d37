"""The commands that make task suites: `tasks from-sessions`."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from .common import ApiBaseOption, console


def from_sessions(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(..., help="Session transcript files."),
    out: Path = typer.Option(..., "--out", help="The task suite's folder (created, or added to)."),
    session_format: str = typer.Option(..., "--format", help="claude-code (a session .jsonl from "
                                       "~/.claude/projects/<project>/) or openai-messages (a JSON list of chat "
                                       "messages)."),
    split: str = typer.Option("train", "--split", help="The split the tasks go to: train, val or test."),
    model: str | None = typer.Option(None, "--model", help="litellm model string of the model that drafts the "
                                     "rubrics (default: the workspace's judge, else its agent)."),
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
        console.print(f"drafted {task.folder} ({task.criteria} criteria) from {task.source}", markup=False,
                      highlight=False, soft_wrap=True)
    if result.written:
        console.print(f"Review each task, then delete its REVIEW.md: the suite will not load before "
                      f"({result.usage.tokens} tokens, ${result.usage.cost_usd:.4f}).", markup=False,
                      highlight=False, soft_wrap=True)
    else:
        console.print("Nothing new to draft.")
