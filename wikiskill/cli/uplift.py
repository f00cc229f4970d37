"""`wikiskill uplift`: main's skills against the cheap alternatives, with intervals."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import typer

from .. import api
from ..history.differences import Kind, interval_text, retire_command, signed, uplift_caveat, uplift_differences
from .common import command_name, plain, print_table, run_options, workspace_of


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


@run_options()
def uplift_command(
    ctx: typer.Context,
    split: str = typer.Option("test", "--split", help="test (a recorded look at the sealed split), val or train."),
    trials: int = typer.Option(1, "--trials", help="Runs of every task per arm (seeds seed ... seed+K-1)."),
    arms: str | None = typer.Option(
        None,
        "--arms",
        help="Comma-separated: none, main, self-written, suite, raw, curated:PATH (none is always included); "
        "default: none,main,self-written, less self-written when the proposer is offline.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON (arms, per_skill)."),
    *,
    options: api.RunOptions,
) -> None:
    """Do main's skills beat no skills, skills the model writes for itself, and curated ones?

    Every arm runs on the same tasks --trials times: its mean with a 95% interval, the paired
    difference from `none` (tasks resampled, trials nested), pass@1 and pass^k, tokens and USD
    per task; then each of main's skills left out in turn: its contribution (main's mean minus
    main's without it: positive, it helps) and tokens; then a verdict line per result, and the
    command that retires a skill that shows no value. An arm that cannot be made (the
    self-written arm's model wrote no skills) is named with the reason and the others are
    scored. The result is committed on `uplift/results` (the report's uplift section); on test,
    the look is counted."""
    chosen = None if arms is None else [arm.strip() for arm in arms.split(",") if arm.strip()]
    if as_json:  # stdout is the JSON alone
        options = replace(options, console=None)
    ws = workspace_of(ctx)
    result = api.uplift(ws, split, trials, chosen, options)
    if as_json:
        print(json.dumps(asdict(result), indent=2))
        return
    arms_rows = [
        [
            arm.arm,
            f"{arm.mean:.3f}",
            interval_text(arm.ci95),
            signed(arm.delta),
            interval_text(arm.delta_ci95),
            _share(arm.pass_at_1),
            _share(arm.pass_hat_k),
            f"{arm.tokens_per_task:.0f}",
            f"{arm.cost_per_task:.6f}",
        ]
        for arm in result.arms
    ]
    headers = ["arm", "mean", "95% interval", "vs none", "95% interval", "pass@1", "pass^k", "tokens/task", "USD/task"]
    print_table(headers, arms_rows, names=(0, 2, 4))
    for arm, reason in result.not_made.items():
        plain(f"arm {arm}: not made: {reason}")
    differences = uplift_differences(result)
    skills = [row for row in differences if row.kind is Kind.SKILL]
    if skills:
        loads = {value.skill: value for value in result.per_skill}
        skill_rows = []
        for row in skills:
            value = loads[row.name]
            notes = ["no value shown: a retire candidate"] if row.retire else []
            if value.never_loaded:
                notes.append("never loaded by the agent")
            if value.rarely_loaded:
                notes.append("loaded too rarely where it applies: the proposer may rewrite its description")
            skill_rows.append(
                [
                    row.name,
                    signed(row.value),
                    interval_text(row.interval),
                    str(value.tokens),
                    value.trigger_text(),
                    "; ".join(notes),
                ]
            )
        headers = ["skill", "contribution", "95% interval", "tokens", "trigger rate", ""]
        print_table(headers, skill_rows, names=(0, 2), wrapped=(4, 5))
        plain("contribution: main's mean minus main's without the skill (positive: the skill helps)")
    look = f"; test look {result.test_look}" if result.test_look else ""
    plain(f"{result.split}: {result.tasks} task(s) x {result.trials} trial(s){look}")
    for row in differences:
        plain(row.verdict())
        if row.retire:
            plain(f"  {row.name} is a retire candidate; to retire it: {retire_command(ws, row.name, command_name())}")
    plain(uplift_caveat(result))
