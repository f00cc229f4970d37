"""The commands that set up a workspace and run the loop or evaluations: `init`, `evolve`, `eval`,
`compare`, `audit`, and the checks before a run: `doctor`, `benchmarks`."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import typer
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import api
from ..benchmarks import Split
from ..core.errors import ConfigError, WikiskillError
from ..loop.estimate import Estimate, RoundEstimate
from .common import (
    AgentOption,
    ApiBaseOption,
    ModelOption,
    command_name,
    console,
    plain,
    print_table,
    run_options,
    shorten,
    workspace_of,
)


def init(
    path: Path = typer.Argument(..., help="New or empty directory for the workspace."),
    benchmark: str = typer.Option(
        "textworld-cooking",
        "--benchmark",
        "-b",
        help="Any name `wikiskill benchmarks` lists, e.g. textworld-cooking or jsonl:DIR.",
    ),
    model: str = typer.Option("offline", "--model", help="litellm model string; `offline` needs no key."),
    api_base: str | None = ApiBaseOption,
    train: int | None = typer.Option(None, "--train", min=1, help="Train tasks (generated benchmarks)."),
    val: int | None = typer.Option(None, "--val", min=1, help="Validation tasks (generated benchmarks)."),
    test: int | None = typer.Option(None, "--test", min=1, help="Test tasks (generated benchmarks)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Tasks run at the same time."),
    agent: str | None = AgentOption,
    command: str | None = typer.Option(
        None,
        "--command",
        help="--agent command: the CLI's command line, split as a shell does, each word a "
        "template (e.g. 'mycli --model {model} {prompt}'); see docs/agents.md.",
    ),
    arg: list[str] | None = typer.Option(
        None,
        "--arg",
        help="--agent command: one item of the CLI's argv, as it is (repeat it, the program first); "
        "instead of --command.",
    ),
    registry_path: Path | None = typer.Option(
        None, "--registry-path", help="harbor:NAME@VERSION: the Harbor registry.json file to look the dataset up in."
    ),
    registry_url: str | None = typer.Option(
        None,
        "--registry-url",
        help="harbor:NAME@VERSION: the Harbor registry.json URL to look the dataset up in "
        "(default: Harbor's public one).",
    ),
    refresh: bool = typer.Option(
        False,
        "--refresh",
        help="harbor:NAME@VERSION: fetch the dataset anew, checking out again the repositories its "
        "registry takes at their head (a changed registry entry is always fetched anew).",
    ),
) -> None:
    """Create a workspace: config, empty wiki and skills, a git repository on branch main.

    Refuses a non-empty directory that is not a workspace."""
    ws = api.init_workspace(
        path,
        benchmark=benchmark,
        model=model,
        api_base=api_base,
        train=train,
        val=val,
        test=test,
        concurrency=concurrency,
        agent=agent,
        command=argv_of(command, arg),
        registry=registry_of(registry_path, registry_url),
        refresh=refresh,
        notify=say,
    )
    console.print(f"Created workspace [bold]{ws.root}[/bold] ({benchmark}, model {model}).")
    suite = api.harbor_suite(ws)
    if suite is not None:
        print_unreadable(suite.unreadable)
        counts = suite.counts()
        console.print(f"Split: {counts['train']} train, {counts['val']} val, {counts['test']} test tasks.")
        for split, use in EMPTY_SPLIT.items():
            if not counts[split]:
                say(f"Warning: the {split} split is empty: {use}; harbor.ids in wikiskill.yaml or more tasks fill it.")
    network = api.suite_network(ws)
    if network is not None and network[0]:
        needing, total, given = network
        where = "" if given else ": this engine has no bridge network, so they are recorded as infra, never scored"
        console.print(f"Network: {needing} of {total} tasks need it in some phase{where}.")
    say(f"Next: {command_name()} -C {shlex.quote(str(path))} evolve --rounds 3")


EMPTY_SPLIT: dict[Split, str] = {
    "train": "evolve has no task to learn from",
    "val": "the gate has no task to decide a change on",
    "test": "`eval --split test` and `uplift` have nothing to score",
}
"""What an empty split leaves undone, said at init."""


def say(line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def registry_of(path: Path | None, url: str | None) -> str | None:
    """The registry `--registry-path` or `--registry-url` gives; not both."""
    if path is not None and url is not None:
        raise ConfigError("give the Harbor registry either as --registry-path or as --registry-url, not both")
    return str(path) if path is not None else url


def print_unreadable(unreadable: dict[str, str]) -> None:
    """How many tasks of a Harbor suite cannot be read and are left out, each with its reason."""
    if not unreadable:
        return
    count = len(unreadable)
    console.print(f"{count} task{'s' if count > 1 else ''} cannot be read and {'are' if count > 1 else 'is'} left out:")
    for task_id, reason in unreadable.items():
        console.print(f"  {task_id}: {reason}", markup=False, highlight=False, soft_wrap=True)


def argv_of(command: str | None, items: list[str] | None) -> list[str] | None:
    """The argv `--command` (split as a shell does) or repeated `--arg` give; not both."""
    if command is not None and items:
        raise ConfigError("give the CLI's argv either as --command or as --arg items, not both")
    if command is None:
        return items or None
    try:
        return shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"--command {command!r} does not split into words: {exc}") from exc


@run_options()
def evolve(
    ctx: typer.Context,
    rounds: int = typer.Option(
        3,
        "--rounds",
        "-n",
        min=1,
        help="More rounds to complete from now; a round left unfinished by an interrupted "
        "run is finished first and counts as the first of them.",
    ),
    *,
    options: api.RunOptions,
    commit_human_edits: bool = typer.Option(
        False, "--commit-human-edits", help="Commit uncommitted edits under skills/ and wiki/ as a human step."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what the rounds would call and spend (as `estimate`); run nothing."
    ),
) -> None:
    """Run rounds of rollout -> maintain -> propose -> validate -> gate (resumes an interrupted run).

    `--rounds N` always means N more completed rounds from now: a round an interrupted run left
    unfinished is resumed as the first of the N, and what it is doing is said before the first round.
    With `budget.max_usd`, a round whose estimate the budget cannot pay for is not started."""
    ws = workspace_of(ctx)
    if dry_run:
        print_estimate(api.estimate(ws, rounds, options))
        return
    result = api.evolve(ws, rounds, options, commit_human_edits=commit_human_edits)
    ran = len(result.decisions)
    if result.stopped_early and not ran:
        console.print(
            f"Nothing to do: the incumbent already scores 1.0 on every val task, so no round was "
            f"started ({result.rounds_completed} completed in all). See `{command_name()} log`."
        )
        return
    note = "; stopped early, as the incumbent now scores 1.0 on every val task" if result.stopped_early else ""
    console.print(
        f"Done: {ran} of {rounds} round(s) run{note}; {result.rounds_completed} completed in all; "
        f"incumbent val score {result.incumbent:.3f}. See `{command_name()} log`."
    )


def estimate_command(
    ctx: typer.Context,
    rounds: int = typer.Option(1, "--rounds", "-n", min=1, help="Rounds to estimate, from the next one."),
    model: str | None = ModelOption,
    api_base: str | None = ApiBaseOption,
    agent: str | None = AgentOption,
) -> None:
    """Print the model calls and tokens the next rounds will make per part, and USD where the model
    is priced, from the settings and the last round's measured usage; writes nothing, calls no model.

    Each part says where its figures come from: a round measured in raw/, the baseline, or
    conservative defaults. `budget.max_usd` is checked against the same estimate before each round."""
    options = api.RunOptions(model=model, api_base=api_base, agent=agent)
    print_estimate(api.estimate(workspace_of(ctx), rounds, options))


def print_estimate(estimate: Estimate) -> None:
    first, last = estimate.rounds[0], estimate.rounds[-1]
    if not any(each.parts for each in estimate.rounds):
        which = (
            f"r{first.round:03d}"
            if first is last
            else f"the next {len(estimate.rounds)} rounds (r{first.round:03d}-r{last.round:03d})"
        )
        plain(f"{which} call no model: every role that would is offline or done")
        return
    table = Table(title=f"r{first.round:03d}: the model calls it will make (tokens: prompt and completion)")
    for column in ("part", "calls", "prompt", "completion", "USD", "from"):
        table.add_column(column, no_wrap=True)
    for part in first.parts:
        usd = f"${part.usd:.4f}" if part.usd is not None else "not priced"
        table.add_row(
            part.part.value, str(part.calls), f"{part.prompt_tokens:,}", f"{part.completion_tokens:,}", usd, part.basis
        )
    console.print(table)
    console.print(f"r{first.round:03d}: {_totals([first])}")
    if len(estimate.rounds) > 1:
        console.print(f"{len(estimate.rounds)} rounds: {_totals(estimate.rounds)}")
    unpriced = sorted({part.role.value for part in first.parts if part.part in first.unpriced})
    if unpriced:
        models = "its model" if len(unpriced) == 1 else "their models"
        plain(f"USD leaves out the calls of the {', '.join(unpriced)}: litellm has no price for {models}")
    plain(wall_time_line(first))
    affordable = estimate.affordable
    if affordable is not None:
        fits = "all of them" if affordable == len(estimate.rounds) else f"{affordable} of {len(estimate.rounds)}"
        console.print(
            f"budget.max_usd ${estimate.max_usd}: {fits} fit; `evolve` does not start a round the rest cannot pay for"
        )


LONG_ROUND_SECONDS = 3600
"""A round whose model time is estimated past this gets a warning."""


def wall_time_line(estimate: RoundEstimate) -> str:
    """How long the round takes at the measured speed, with a warning past an hour, or how to
    measure it."""
    label = f"r{estimate.round:03d}"
    unmeasured = ", ".join(role.value for role in estimate.unmeasured)
    if estimate.seconds is None:
        return (
            f"{label}: wall time unknown: nothing has measured the speed of the models' servers yet "
            "(`wikiskill doctor` does)"
        )
    line = f"{label}: about {_duration(estimate.seconds)} of model time at the servers' measured speed"
    if unmeasured:
        line += f" (the {unmeasured} not included: its server's speed is not measured yet)"
    if estimate.seconds > LONG_ROUND_SECONDS:
        line += (
            "; warning: more than an hour a round: a faster model or server, fewer train or val tasks, "
            "or more `concurrency` where the server serves calls in parallel"
        )
    return line


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return f"{seconds:.0f} s"
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def _totals(rounds: list[RoundEstimate]) -> str:
    calls, tokens = sum(each.calls for each in rounds), sum(each.tokens for each in rounds)
    return f"about {calls:,} calls, {tokens:,} tokens, ${sum(each.usd for each in rounds):.4f}"


@run_options()
def eval_command(
    ctx: typer.Context,
    split: str = typer.Option("val", "--split", help="val, test or train."),
    ref: str = typer.Option("main", "--ref", help="Evaluate the skills at this git ref."),
    *,
    options: api.RunOptions,
) -> None:
    """Score the skills on main (or --ref) on a split and print a per-task table. Writes nothing to
    git but, on test, the look (the `test-looks` branch: `status` counts them).

    Scored as the gate does (`gate.repeats` runs per task); the evaluation's fingerprint is printed."""
    ws = workspace_of(ctx)
    evaluated = api.evaluate(ws, split, ref, options)
    e = evaluated.evaluation
    games = all(trajectory.steps for trajectory in evaluated.runs[0] if not trajectory.infra)
    shown = ("actions", "last action") if games else ("prediction", "expected")
    table = Table("task", "score", *shown, title=f"{split}: {e.size} tasks")
    failed = []
    for trajectory in evaluated.runs[0]:
        row = trajectory.outcome()
        score = f"{e.scores[row['id']]:.3f}" if row["id"] in e.scores else "infra"
        if games:
            last = trajectory.steps[-1].action if trajectory.steps else ""
            table.add_row(row["id"], score, str(len(trajectory.steps)), shorten(last))
        else:
            table.add_row(row["id"], score, shorten(row["prediction"]), shorten(row["expected"]))
        if row["error"]:
            failed.append(f"{row['id']}: {row['error']}")
    console.print(table)
    for line in failed:
        console.print(line, markup=False, highlight=False)
    repeats = f" (mean of {len(evaluated.runs)} repeats per task)" if len(evaluated.runs) > 1 else ""
    infra = f", {len(e.infra)} left out as infra" if e.infra else ""
    if not e.n:
        console.print(f"no task was scored: all {len(e.infra)} failed as infra (above); fingerprint {e.fingerprint}")
        raise typer.Exit(1)
    console.print(f"mean score {e.mean:.3f} ({e.solved}/{e.n} solved{infra}){repeats}; fingerprint {e.fingerprint}")


def _cost(value: float | None) -> str:
    return "—" if value is None else f"{value:.6g}"


@run_options()
def compare_command(
    ctx: typer.Context,
    ref_a: str = typer.Argument(..., help="The reference skills (e.g. baseline, round/003, a rejected/... tag)."),
    ref_b: str = typer.Argument(..., help="The skills compared with them (e.g. main)."),
    split: str = typer.Option("val", "--split", help="val, test or train."),
    *,
    options: api.RunOptions,
) -> None:
    """Compare two refs' skills task by task, with the mean difference and its interval.

    Each task is fixed, broken, better, worse or the same; the interval is 95%. Then one plain
    verdict line (which ref beats the other by how much, and whether the interval excludes 0)
    and why these numbers can differ from the gate's and uplift's. Evaluations git records, or
    the result cache holds, under the current fingerprint are not rerun."""
    from ..history.compare import Change

    result = api.compare(workspace_of(ctx), ref_a, ref_b, split, options)
    unit = result.unit.value
    table = Table(
        "task", ref_a, ref_b, "change", f"{ref_a} {unit}", f"{ref_b} {unit}", title=f"{split}: {ref_a} → {ref_b}"
    )
    for row in result.rows:
        table.add_row(row.task, f"{row.a:.3f}", f"{row.b:.3f}", row.change.value, _cost(row.a_cost), _cost(row.b_cost))
    console.print(table)
    counts = ", ".join(f"{result.count(change)} {change.value}" for change in Change)
    low, high = result.interval
    console.print(
        f"{ref_a} {result.a.mean:.3f} → {ref_b} {result.b.mean:.3f}: mean difference "
        f"{result.mean_diff:+.4f}, {result.confidence:.0%} interval [{low:+.4f}, {high:+.4f}] "
        f"(n = {len(result.rows)}; {counts})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if result.cost is not None:
        shown = f"cost ({result.cost.rule.value}): {ref_b} {result.cost.text(against=ref_a)}"
        console.print(shown, markup=False, highlight=False, soft_wrap=True)
    plain(result.verdict())
    plain(result.caveat())


@run_options("model", "api_base", "concurrency")
def audit_command(
    ctx: typer.Context,
    rerun: bool = typer.Option(False, "--rerun", help="Evaluate every merge again from scratch (model calls)."),
    *,
    options: api.RunOptions,
) -> None:
    """Check that every accepted merge is the evidence its commit claims; exit 1 on a problem.

    Each merge must record an evaluation of exactly its own skills, compared with an
    incumbent evaluated under the same setup, with the claimed score in its results file; no
    candidate its gate decided may still have its skill/ branch. --rerun also evaluates each
    merge again under the current settings."""
    report = api.audit(workspace_of(ctx), rerun, options if rerun else replace(options, console=None))
    for problem in report.problems:
        typer.echo(problem)
    rerun_note = f", {report.rerun} re-evaluated" if rerun else ""
    if not report.merges:
        typer.echo("no accepted merge on main to audit")
    elif report.problems:
        typer.echo(f"{len(report.merges)} accepted merge(s) audited{rerun_note}: {len(report.problems)} problem(s)")
    else:
        typer.echo(f"{len(report.merges)} accepted merge(s) audited{rerun_note}: every one is sound")
    if report.problems:
        raise typer.Exit(1)


def doctor_command(ctx: typer.Context, model: str | None = ModelOption, api_base: str | None = ApiBaseOption) -> None:
    """Probe each role's model once: reachable, latency, JSON output, tool protocol, context window, price.

    The tool protocol is the one the model speaks (`native`, `text` or `none`); price: whether
    litellm knows it. Exit 1 when a role cannot work."""
    ws = workspace_of(ctx)
    checks = api.doctor(ws, model=model, api_base=api_base)
    mark = {True: "yes", False: "no", None: "—"}
    rows = [
        [
            check.role,
            check.model,
            mark[check.reachable],
            f"{check.latency_s:.2f}s" if check.latency_s is not None else "—",
            mark[check.json_ok],
            f"{check.protocol} ({check.configured_protocol})",
            str(check.context_window or "—"),
            mark[check.price_known],
        ]
        for check in checks
    ]
    print_table(["role", "model", "reachable", "latency", "JSON ok", "tools", "context", "price known"], rows, (0, 1))
    for check in checks:
        if check.problem:
            plain(check.problem)
        for note in check.notes:
            plain(f"{check.role}: {note}")
    if any(check.failed for check in checks):
        raise typer.Exit(1)
    try:
        plain(wall_time_line(api.estimate(ws).rounds[0]))
    except WikiskillError as exc:  # the models work; only the round could not be estimated
        plain(f"the next round's wall time could not be estimated: {exc}")


def check_suite_command(
    path: str = typer.Argument(
        ...,
        help="A Harbor suite (a folder of task folders, one task folder, or harbor:NAME@VERSION), a "
        "task-folder suite (tasks:PATH) or a named suite (example-qa, textworld-cooking, ...).",
    ),
    runtime: str = typer.Option("docker", "--runtime", help="docker or podman."),
    concurrency: int = typer.Option(2, "--concurrency", min=1, help="Tasks checked at the same time."),
    registry_path: Path | None = typer.Option(
        None, "--registry-path", help="harbor:NAME@VERSION: the Harbor registry.json file to look the dataset up in."
    ),
    registry_url: str | None = typer.Option(
        None, "--registry-url", help="harbor:NAME@VERSION: the Harbor registry.json URL (default: Harbor's public one)."
    ),
    refresh: bool = typer.Option(
        False,
        "--refresh",
        help="harbor:NAME@VERSION: fetch the dataset anew, checking out again the repositories its "
        "registry takes at their head (a changed registry entry is always fetched anew).",
    ),
) -> None:
    """Check a suite before spending on it: per task, whether its reference solution scores 1 and
    doing nothing 0 (a Harbor task's solution/solve.sh against its untouched container, a task
    folder's solution/ against its untouched files), and which tasks fail to build or cannot be
    read. For a task folder's check, whether its crash on the agent's work is the task's failure
    or infrastructure, and why. Exits 1 unless every checked task is sound."""
    registry = registry_of(registry_path, registry_url)
    checks = api.check_suite(
        path, runtime=runtime, concurrency=concurrency, registry=registry, refresh=refresh, notify=say
    )
    ruled = any(check.crash is not None for check in checks)
    table = Table("task", "oracle", "nop", "verdict", *(["crash"] if ruled else []))
    for check in checks:
        shown = [("-" if value is None else f"{value:g}") for value in (check.oracle, check.nop)]
        verdict = Text(check.verdict.value, style="green" if check.sound else "red")
        table.add_row(check.task_id, *shown, verdict, *([check.crash or "-"] if ruled else []))
    console.print(table)
    rules: dict[tuple[str, str], list[str]] = {}
    for check in checks:
        if check.crash is not None:
            rules.setdefault((check.crash, check.crash_reason), []).append(check.task_id)
    for (rule, why), ids in rules.items():  # which rule applies to a crash of the check, and why
        console.print(f"a crash is {rule} ({why}): {', '.join(ids)}", markup=False, highlight=False, soft_wrap=True)
    unchecked = [check.task_id for check in checks if not check.reference]
    checked = [check for check in checks if check.reference]
    broken = [check for check in checked if not check.sound]
    for check in broken:  # whole, under the table: a cell would cut a log's path
        console.print(f"{check.task_id}: {check.reason}", markup=False, highlight=False, soft_wrap=True)
    if unchecked:
        console.print(
            f"{len(unchecked)} task(s) carry no reference solution and were not checked: {', '.join(unchecked)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"{len(checked) - len(broken)} of {len(checked)} tasks sound.")
    if broken:
        raise typer.Exit(1)


def benchmarks_command() -> None:
    """List the benchmark suites this install can run (built-in and plugins) and what each needs.

    Each with its kind, default split sizes, whether the offline model plays it, and whether what
    it needs is installed."""
    for row in api.benchmarks():
        spec = row.spec
        if spec is None:
            console.print(f"[bold]{row.name}[/bold]  [red]cannot be loaded[/red]: {row.error}", soft_wrap=True)
            continue
        counts = spec.default_splits
        splits = f"train/val/test {counts.train}/{counts.val}/{counts.test}" if counts else "splits from its files"
        offline = "the offline model plays it" if spec.offline_playable else "needs an LLM"
        ready = "[green]ready[/green]" if row.ready else f"[red]missing {', '.join(row.missing)}[/red]"
        console.print(f"[bold]{row.usage}[/bold]  {spec.kind.value}, {splits}, {offline}  {ready}", soft_wrap=True)
        for line in [spec.summary, *([f"needs: {spec.needs}"] if spec.needs else [])]:
            console.print(Padding(Text(line), (0, 0, 0, 4)))
