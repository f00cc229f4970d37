"""The commands that run tasks: evolve, its estimate, eval, compare, uplift and audit."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.errors import BenchmarkError, WikiskillError
from ..history.test_looks import looks_at
from ..loop.evolve import EvolveResult, holding, run_rounds
from ..loop.harness import Evaluated, Harness
from ..store.workspace import Workspace
from ..telemetry.spans import command as traced_command
from .command import checked_config, command_session
from .options import RunOptions, split_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..benchmarks import Split
    from ..history.audit import AuditReport
    from ..history.compare import Comparison
    from ..loop.estimate import Estimate
    from ..store.uplift_record import UpliftResult


def evolve(
    ws: Workspace, rounds: int, options: RunOptions | None = None, commit_human_edits: bool = False
) -> EvolveResult:
    """Run or resume `rounds` rounds of evolution on the workspace."""
    held = holding(ws, commit_human_edits)
    with command_session(ws, options or RunOptions(), "evolve", held=held, rounds=rounds) as harness:
        return run_rounds(harness, rounds, commit_human_edits)


def estimate(ws: Workspace, rounds: int = 1, options: RunOptions | None = None) -> Estimate:
    """What the next `rounds` rounds of `evolve` will call, part by part (`evolve --dry-run`):
    calls, tokens, and USD where the model is priced, from the settings with `options`' overrides
    and the usage the last round measured, with `budget.max_usd`, and each round's wall time at the
    speed the last command (or `doctor`) measured on each role's server. Writes nothing and calls no
    model."""
    from ..llm.speed import SPEED_FILE, SpeedBook
    from ..loop.estimate import Estimate, estimate_round, with_wall_time
    from ..store.rounds import completed_rounds

    with command_session(ws, options or RunOptions(), "estimate", runs=False, traced=False) as harness:
        first = completed_rounds(ws) + 1
        speeds = SpeedBook(ws.state_dir / SPEED_FILE)
        config = harness.config
        estimates = [
            with_wall_time(estimate_round(harness.evaluating, number, later=number > first), config, speeds)
            for number in range(first, first + rounds)
        ]
    return Estimate(rounds=estimates, max_usd=config.budget.max_usd)


def evaluate(ws: Workspace, split: str, ref: str = "main", options: RunOptions | None = None) -> Evaluated:
    """Score the skills at `ref` on a split (`gate.repeats` times per task, as the gate does).
    Writes nothing to git; finished tasks are cached under the evaluation's fingerprint. Another
    `options.agent` measures the same skills on another agent, under its own fingerprint."""
    split = split_of(split)
    ws.resolve(ref)
    with command_session(ws, options or RunOptions(), "eval", split=split, ref=ref) as harness:
        prepare_split(harness, split)
        with looks_at(harness, split, "eval", [ref]):
            return harness.evaluating.evaluate(ref, split, f"eval {split}")


def compare(ws: Workspace, ref_a: str, ref_b: str, split: str = "val", options: RunOptions | None = None) -> Comparison:
    """Ref B's skills against ref A's on a split, task by task, with a confidence interval of the
    mean difference. Evaluations git records under the current fingerprint are not rerun."""
    from ..history.compare import compare as _compare

    split = split_of(split)
    for ref in (ref_a, ref_b):
        ws.resolve(ref)  # an unknown ref is refused before the benchmark loads
    with command_session(ws, options or RunOptions(), "compare", split=split) as harness:
        prepare_split(harness, split)
        with looks_at(harness, split, "compare", [ref_a, ref_b]):
            return _compare(harness.evaluating, ref_a, ref_b, split)


def uplift(
    ws: Workspace,
    split: str = "test",
    trials: int = 1,
    arms: Sequence[str] | None = None,
    options: RunOptions | None = None,
) -> UpliftResult:
    """Arms of skills (none, main, self-written, suite, raw, curated:PATH) scored on the same tasks
    `trials` times each, with intervals, the paired difference from `none`, and each of main's
    skills left out in turn; recorded on `uplift/results` (and, on test, as a look at test). Unset
    `arms`: none, main, and self-written unless the proposer is offline. An arm left out or not
    made (the self-written arm's model wrote no skills it could read) is in `not_made`, with why."""
    from ..history.uplift import check_arms, default_arms, measure, record

    split = split_of(split)
    if trials < 1:
        raise WikiskillError("--trials must be at least 1")
    if arms is not None:
        check_arms(list(arms))  # an unknown arm is refused before the benchmark loads
    with command_session(ws, options or RunOptions(), "uplift", split=split) as harness:
        defaults, left_out = default_arms(harness.config)
        chosen = check_arms(list(arms if arms is not None else defaults))
        prepare_split(harness, split, ("train",) if "self-written" in chosen else ())
        with looks_at(harness, split, "uplift", ["main"]) as look:
            result = measure(harness, split, trials, chosen, not_made={} if arms is not None else left_out)
            result = replace(result, test_look=look if isinstance(look, int) else None)
            record(harness, result)
            return result


def prepare_split(harness: Harness, split: Split, more: tuple[Split, ...] = ()) -> None:
    """Prepare `split` (and `more`) for scoring; an empty split is refused in one line, before a
    look at test is recorded or anything runs."""
    harness.benchmark.prepare((split, *more))
    if not harness.benchmark.tasks(split):
        raise BenchmarkError(
            f"the {split} split is empty: this suite's split gives it no task (wikiskill.yaml's `splits`, "
            "or `harbor.ids` for a Harbor suite)"
        )


def audit(ws: Workspace, rerun: bool = False, options: RunOptions | None = None) -> AuditReport:
    """Check every accepted merge on main against the evaluation it claims (see wikiskill.history.audit);
    `rerun` evaluates each again from scratch when it was recorded under the current settings."""
    from ..history.audit import Records
    from ..history.audit import audit as _audit

    options = options or RunOptions()
    if not rerun:  # reads git only: no suite, no model, no key
        config = checked_config(ws, options, runs=False)
        with traced_command("audit", config.telemetry, benchmark=config.benchmark, rerun=rerun):
            return _audit(Records(ws, config))
    with command_session(ws, options, "audit", rerun=rerun) as harness:
        harness.benchmark.prepare(("val",))
        return _audit(harness.reading, harness.evaluating)
