"""`wikiskill audit`: check that every accepted merge on main is the evidence its commit claims.

For each accepted gate merge (rolled back or not): the trailers name an evaluation of exactly the
merge's own skills; that evaluation and the incumbent's it was compared with share one setup;
the claimed score is the mean of the per-task results committed with it; and, with `rerun`,
evaluating the merge again from scratch under the current settings gives the claimed score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..loop.fingerprint import digest
from ..loop.harness import Harness
from ..store.evaluations import evaluation_at, find_evaluation
from ..store.trailers import Decision, Step
from ..store.workspace import MAIN, Commit


@dataclass
class AuditReport:
    merges: list[Commit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    rerun: int = 0
    """Merges evaluated again (those recorded under the current settings, when asked)."""


def audit(harness: Harness, rerun: bool = False) -> AuditReport:
    ws = harness.ws
    report = AuditReport()
    for merge in ws.log(MAIN):
        meta = merge.meta
        if meta.step != Step.GATE or meta.decision != Decision.ACCEPTED:
            continue
        report.merges.append(merge)
        label = f"round {meta.round} ({meta.skill}, {merge.sha[:10]})"
        problems = _recorded_problems(harness, merge)
        report.problems += [f"{label}: {problem}" for problem in problems]
        if rerun and not problems and meta.setup == harness.setup("val").id:
            report.rerun += 1
            again = harness.evaluate(merge.sha, "val", f"audit {label}", cached=False).evaluation
            if abs(again.mean - (meta.score or 0.0)) > 1e-6:
                report.problems.append(f"{label}: claims val {meta.score:.3f}, re-evaluated {again.mean:.3f}")
    return report


def _recorded_problems(harness: Harness, merge: Commit) -> list[str]:
    ws, meta = harness.ws, merge.meta
    if len(merge.parents) != 2:
        return ["an accepted gate commit that is not a merge"]
    if not (meta.fingerprint and meta.setup and meta.skills_id and meta.results):
        return ["records no evaluation fingerprint"]
    problems = []
    merged = harness.skills_id(merge.sha)
    if meta.skills_id != merged:
        problems.append(f"validated skills {meta.skills_id[:10]} are not the merged ones {merged[:10]}")
    if meta.fingerprint != digest([meta.setup, meta.skills_id]):
        problems.append("its fingerprint is not of its setup and skills")
    evaluation = evaluation_at(ws, merge)
    if evaluation is None:
        problems.append(f"its results file {meta.results} is missing")
    elif abs(evaluation.mean - (meta.score or 0.0)) > 1e-6:
        problems.append(f"claims val {meta.score:.3f}, its results file gives {evaluation.mean:.3f}")
    incumbent = find_evaluation(ws, merge.parents[0], meta.incumbent_fingerprint or "")
    if incumbent is None:
        problems.append("the incumbent evaluation it was compared with is not in main's history before it")
    elif incumbent[1].setup != meta.setup:
        problems.append("it was compared with an incumbent evaluated under another setup")
    return problems
