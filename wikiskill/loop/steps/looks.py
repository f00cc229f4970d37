"""Validation in batches, for a policy whose plan has looks that may stop early
(`gate.policy: sequential`).

Each look runs the next batch of val tasks for the candidate and for main (main's tasks come
from its recorded evaluation or the result cache where they can), then commits, on the branch,
both sides' per-task outcomes so far and where the look stands (`Look`, `Statistic`,
`Boundary`, `Crossed`). That commit is the round's state: a run killed between batches resumes
after the last look committed and never decides a look again; a look of other skills, another
incumbent or another design (pool, batch, confidence, margin) is stale and the looks start over
(finished tasks come from the result cache)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ...contracts.gate import Look, Looks
from ...store.evaluations import Evaluation, read_outcomes
from ...store.rounds import MAIN_SIDE_FILE, round_label
from ...store.trailers import Action, Step, Trailers, policy_keys
from ...store.workspace import MAIN, Commit
from ..evaluating import retry_trailers
from ..gate_policies import policy_confidence
from .indecisive import indecisive, refuse_infra
from .summary import of_evaluation

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..evaluating import Evaluator
    from ..harness import StepContext
    from ..reading import Reader

CANDIDATE_FILE = "val.jsonl"


def current_look(evaluator: Evaluator, state: RoundState, policy: Looks) -> Commit | None:
    """The newest look on the branch, if it is of the tip's skills against main's under the
    current setup and design."""
    if state.tip is None:
        return None
    reader = evaluator.reader
    expected = evaluator.fingerprint(state.tip)
    pool = len(reader.tasks("val"))
    for commit in state.validations:
        meta = commit.meta
        if meta.fingerprint != expected:
            continue
        same = (
            meta.look is not None
            and meta.incumbent_fingerprint == evaluator.fingerprint(MAIN)
            and meta.pool == pool
            and meta.batch == policy.batch
            and _same(meta.confidence, policy_confidence(reader.gate_settings))
            and _same(meta.margin, reader.config.gate.margin)
            and policy_keys(meta.policy_settings) == policy_keys(reader.policy.trailers())
        )
        return commit if same else None
    return None


def _same(recorded: float | None, setting: float) -> bool:
    return recorded is not None and round(recorded, 6) == round(setting, 6)


def incumbent_at(reader: Reader, look: Commit) -> Evaluation:
    """Main's side of a look: its outcomes on the same tasks."""
    meta = look.meta
    text = reader.ws.read_file(look.sha, meta.incumbent_results or "") or ""
    return read_outcomes(text).evaluation(meta.incumbent_fingerprint or "", meta.setup or "", reader.skills_id(MAIN))


def looks_finished(evaluator: Evaluator, state: RoundState, policy: Looks) -> bool:
    look = current_look(evaluator, state, policy)
    return look is not None and look.meta.crossed is not None


def run_looks(ctx: StepContext, state: RoundState, policy: Looks) -> None:
    """Look after look until one stops the validation, each committed before the next batch."""
    reader, evaluator, publisher = ctx.reader, ctx.evaluator, ctx.publisher
    label, branch = round_label(state.number), state.candidate
    pool = reader.tasks("val")
    counts = policy.counts(len(pool))
    retire = state.proposal is not None and state.proposal.meta.action == Action.RETIRE
    previous = current_look(evaluator, state, policy)
    texts = {CANDIDATE_FILE: "", MAIN_SIDE_FILE: ""}
    done = 0
    if previous is not None:
        texts = {
            CANDIDATE_FILE: reader.ws.read_file(previous.sha, previous.meta.results or "") or "",
            MAIN_SIDE_FILE: reader.ws.read_file(previous.sha, previous.meta.incumbent_results or "") or "",
        }
        done = previous.meta.tasks or 0
    known = _recorded_rows(evaluator)
    for number, n in enumerate(counts, 1):
        if n <= done:
            continue
        tasks = pool[done:n]
        publisher.begin_step()
        what = f"{label} validate: look {number} of {len(counts)}"
        with indecisive(publisher, state, Step.VALIDATE):
            candidate = evaluator.evaluate(branch, "val", f"{what}: val", tasks=tasks)
            kept = evaluator.kept(branch, "val", tasks=tasks)
            missing = [task for task in tasks if task.id not in known]
            if missing:
                ran = evaluator.evaluate(MAIN, "val", f"{what}: incumbent", tasks=missing)
                known.update(_rows(ran.outcomes))
                kept += evaluator.kept(MAIN, "val", tasks=missing)
        texts[CANDIDATE_FILE] += candidate.outcomes
        texts[MAIN_SIDE_FILE] += "".join(known[task.id] for task in tasks)
        evaluation = candidate.evaluation
        mine = read_outcomes(texts[CANDIDATE_FILE]).evaluation(
            evaluation.fingerprint, evaluation.setup, evaluation.skills_id
        )
        main_eval = read_outcomes(texts[MAIN_SIDE_FILE]).evaluation(
            evaluator.fingerprint(MAIN), evaluation.setup, reader.skills_id(MAIN)
        )
        paths = {name: f"raw/{label}/{name}" for name in texts}
        files = {paths[name]: text for name, text in texts.items()}
        refuse_infra(ctx, state, Step.VALIDATE, mine, main_eval, files, kept)
        look = policy.look(mine, main_eval, len(pool), retire)
        trailers = Trailers(
            round=state.number,
            step=Step.VALIDATE,
            score=mine.mean,
            skills_id=mine.skills_id,
            setup=mine.setup,
            fingerprint=mine.fingerprint,
            results=paths[CANDIDATE_FILE],
            incumbent=main_eval.mean,
            incumbent_fingerprint=main_eval.fingerprint,
            incumbent_results=paths[MAIN_SIDE_FILE],
            policy=reader.policy.name,
            **look_trailers(look),
            **policy_keys(reader.policy.trailers()),
            **retry_trailers(candidate.runs),
        )
        publisher.commit(
            f"{what}: val {of_evaluation(mine, reader.interactive)} ({look.text()})",
            trailers,
            files,
            branch=branch,
        )
        done = n
        if look.crossed is not None:
            return


def look_trailers(look: Look) -> dict[str, object]:
    return {
        "tasks": look.tasks,
        "look": look.number,
        "pool": look.pool,
        "batch": look.batch,
        "confidence": look.confidence,
        "margin": look.margin,
        "statistic": look.statistic,
        "boundary": look.boundary,
        "crossed": look.crossed,
    }


def _recorded_rows(evaluator: Evaluator) -> dict[str, str]:
    """Main's per-task outcome lines that git records under the current setup, by task id."""
    found = evaluator.recorded(MAIN)
    if found is None or not found[0].meta.results:
        return {}
    return _rows(evaluator.reader.ws.read_file(found[0].sha, found[0].meta.results) or "")


def _rows(text: str) -> dict[str, str]:
    rows = {}
    for line in text.splitlines(keepends=True):
        try:
            rows[str(json.loads(line)["id"])] = line if line.endswith("\n") else line + "\n"
        except (ValueError, KeyError, TypeError):
            continue
    return rows
