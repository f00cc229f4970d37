"""`wikiskill audit`: check that every accepted merge on main is the evidence its commit claims.

For each accepted gate merge (rolled back or not): the trailers name an evaluation of exactly the
merge's own skills; that evaluation and the incumbent's it was compared with share one setup;
the claimed score is the mean of the per-task results committed with it; a sequential verdict,
recomputed from both sides' committed per-task results and the design its trailers record,
accepts at the same look on the same tasks; a `gate.cost` test, replayed, gives the p-value
and outcome recorded and allows the merge; the tasks left out as infrastructure failures are
those both sides' results record, no more than `gate.max_infra_share`; and, with `rerun`,
evaluating the merge again from scratch under the current settings gives the claimed score.
It also names each `skill/` branch of a round its gate already decided, which only an
interrupted run leaves (the next `evolve` deletes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..benchmarks import Task
from ..contracts.gate import GATE_POLICIES
from ..core.config import Config
from ..core.errors import WikiskillError
from ..loop.alpha_budget import ledger_problems
from ..loop.cost_gate import below_p_value, costed_pairs
from ..loop.evaluating import Evaluator
from ..loop.fingerprint import digest
from ..loop.gate_policies import evidence_of, gain_floor, infra_problem, left_out, paired
from ..loop.reading import Reader
from ..loop.settings import CostRule
from ..store.evaluations import Evaluation, evaluation_at, find_evaluation, read_outcomes, skills_id
from ..store.rounds import leftover_branches
from ..store.trailers import Action, Decision, Step
from ..store.workspace import MAIN, Commit, Workspace


@dataclass
class AuditReport:
    merges: list[Commit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    rerun: int = 0
    """Merges evaluated again (those recorded under the current settings, when asked)."""


@dataclass(frozen=True)
class Records:
    """What an audit without a rerun reads: the workspace's history and its settings (no suite, no
    model, no key)."""

    ws: Workspace
    config: Config

    def skills_id(self, ref: str) -> str:
        return skills_id(self.ws, ref, self.config.agent.wiki_access)


Recorded = Records | Reader
"""Either holds what the audit reads: a command's read context (for a rerun) as well as the records alone."""


def audit(records: Recorded, rerun: Evaluator | None = None) -> AuditReport:
    """Every accepted merge checked against its records; with `rerun`, the evaluate context that
    evaluates each one again, those recorded under the current settings."""
    ws = records.ws
    report = AuditReport(problems=[f"alpha budget: {problem}" for problem in ledger_problems(ws, records.config.gate)])
    for branch, number in sorted(leftover_branches(ws).items()):
        report.problems.append(
            f"branch {branch} is left over: round {number}'s gate decided it; the next `wikiskill evolve` deletes it"
        )
    for merge in ws.log(MAIN):
        meta = merge.meta
        if meta.step != Step.GATE or meta.decision != Decision.ACCEPTED:
            continue
        report.merges.append(merge)
        label = f"round {meta.round} ({meta.skill}, {merge.sha[:10]})"
        problems = _recorded_problems(records, merge)
        report.problems += [f"{label}: {problem}" for problem in problems]
        if rerun is not None and not problems and meta.setup == rerun.setup("val").id:
            report.rerun += 1
            again = rerun.evaluate(
                merge.sha, "val", f"audit {label}", cached=False, tasks=_tasks_used(rerun, merge)
            ).evaluation
            if abs(again.mean - (meta.score or 0.0)) > 1e-6:
                report.problems.append(f"{label}: claims val {meta.score:.3f}, re-evaluated {again.mean:.3f}")
    return report


def _tasks_used(evaluator: Evaluator, merge: Commit) -> list[Task] | None:
    """The val tasks its claimed score rests on: those scored (a sequential verdict's looks may
    have used part of val; infrastructure failures have no score); None: all of val."""
    evaluation = evaluation_at(evaluator.reader.ws, merge)
    if evaluation is None or (merge.meta.look is None and not evaluation.infra):
        return None
    return [task for task in evaluator.reader.tasks("val") if task.id in evaluation.scores]


def _recorded_problems(records: Recorded, merge: Commit) -> list[str]:
    ws, meta = records.ws, merge.meta
    if len(merge.parents) != 2:
        return ["an accepted gate commit that is not a merge"]
    if not (meta.fingerprint and meta.setup and meta.skills_id and meta.results):
        return ["records no evaluation fingerprint"]
    problems = []
    merged = records.skills_id(merge.sha)
    if meta.skills_id != merged:
        problems.append(f"validated skills {meta.skills_id[:10]} are not the merged ones {merged[:10]}")
    if meta.fingerprint != digest([meta.setup, meta.skills_id]):
        problems.append("its fingerprint is not of its setup and skills")
    evaluation = evaluation_at(ws, merge)
    if evaluation is None:
        problems.append(f"its results file {meta.results} is missing")
    elif meta.score is None:
        problems.append(f"claims no val score; its results file gives {evaluation.mean:.3f}")
    elif abs(evaluation.mean - meta.score) > 1e-6:
        problems.append(f"claims val {meta.score:.3f}, its results file gives {evaluation.mean:.3f}")
    if meta.look is not None:
        return problems + _sequential_problems(records, merge, evaluation)
    incumbent = find_evaluation(ws, merge.parents[0], meta.incumbent_fingerprint or "")
    if incumbent is None:
        problems.append("the incumbent evaluation it was compared with is not in main's history before it")
    elif incumbent[1].setup != meta.setup:
        problems.append("it was compared with an incumbent evaluated under another setup")
    elif evaluation is not None:
        problems += _infra_problems(records, merge, evaluation, incumbent[1])
        problems += _cost_problems(records, merge, evaluation, incumbent[1])
    return problems


def _cost_problems(records: Recorded, merge: Commit, candidate: Evaluation, incumbent: Evaluation) -> list[str]:
    """The cost test replayed on both sides' committed results gives the p-value and outcome the
    commit records, and they allow the merge: `bound` needs the cost shown within its limit; a
    `tiebreak` merge on cost needs it shown cheaper and the score shown no worse."""
    meta, seed = merge.meta, records.config.gate.seed
    if meta.cost_rule is None:
        return []
    unit, limit, confidence, claimed_p = meta.cost_unit, meta.cost_limit, meta.cost_confidence, meta.cost_p_value
    if unit is None or limit is None or confidence is None or claimed_p is None or meta.cost_passed is None:
        return [f"records the cost rule {meta.cost_rule.value} without its test"]
    pairs = costed_pairs(candidate, incumbent, unit)
    p = below_p_value(pairs, limit, seed)
    passed = p < 1 - confidence
    if abs(p - claimed_p) > 1e-6 or passed != meta.cost_passed:
        return [f"claims cost p={meta.cost_p_value:.4f}; its committed results give p={p:.4f}"]
    if meta.cost_rule is CostRule.BOUND and not passed:
        return [f"accepted although its cost was not shown below {meta.cost_limit:g} times main's"]
    if meta.cost_rule is not CostRule.TIEBREAK or not meta.cost_decided:
        return []
    if not passed:
        return ["accepted as cheaper although its cost was not shown lower"]
    if meta.score_floor is None:
        gain = evidence_of(meta.policy or "", candidate, incumbent).gain
        return [] if gain == 0 else [f"accepted as cheaper at equal means, but the means differ by {float(gain):+.4f}"]
    floor = gain_floor(paired(candidate, incumbent), confidence, seed)
    if abs(floor - meta.score_floor) > 1e-6:
        return [f"claims a score gain >= {meta.score_floor:+.4f}; its committed results give {floor:+.4f}"]
    margin = meta.noninferiority or 0.0
    if not floor > -margin:
        return [f"accepted as cheaper although its score gain's lower bound {floor:+.4f} is not above -{margin:g}"]
    return []


def _infra_problems(records: Recorded, merge: Commit, candidate: Evaluation, incumbent: Evaluation) -> list[str]:
    """The tasks both sides' results leave out as infrastructure failures are those the commit
    says it left out, and no more than `gate.max_infra_share` of them."""
    dropped = left_out(candidate, incumbent)
    if len(dropped) != (merge.meta.infra or 0):
        return [f"claims {merge.meta.infra or 0} task(s) left out as infra; its results leave out {len(dropped)}"]
    problem = infra_problem(records.config.gate, candidate, incumbent)
    return [f"accepted although {problem}"] if problem else []


def _sequential_problems(records: Recorded, merge: Commit, candidate: Evaluation | None) -> list[str]:
    """Main's side of the looks is of main's skills before the merge, under the same setup, and
    the looks replayed on both sides' results accept where the commit says."""
    ws, meta = records.ws, merge.meta
    if not meta.incumbent_results:  # git would read the path "" as the commit's whole tree
        return ["records a sequential verdict without the incumbent's results file it was judged on"]
    text = ws.read_file(merge.sha, meta.incumbent_results)
    if candidate is None or text is None:
        return [f"the incumbent's results file {meta.incumbent_results} of its sequential verdict is missing"]
    before = skills_id(ws, merge.parents[0], records.config.agent.wiki_access)
    if meta.incumbent_fingerprint != digest([meta.setup, before]):
        return ["its incumbent results are not of main's skills before it under the same setup"]
    incumbent = read_outcomes(text).evaluation(meta.incumbent_fingerprint, meta.setup or "", before)
    policy = GATE_POLICIES.load(meta.policy or records.config.gate.policy)
    looks = policy.from_settings(policy.recorded_settings(meta, records.config.gate)).plan().looks
    if looks is None or meta.pool is None:
        return [f"records looks, but its policy {meta.policy} does not validate in batches"]
    claimed = f"accepted at look {meta.look} on {meta.tasks} tasks"
    try:
        verdict = looks.judge_looks(candidate, incumbent, meta.pool, meta.action == Action.RETIRE)
    except WikiskillError as error:  # the committed looks do not reach a verdict under the design recorded
        return [f"claims {claimed}; its committed results give no verdict: {error}"]
    infra = _infra_problems(records, merge, candidate, incumbent) + _cost_problems(records, merge, candidate, incumbent)
    if infra:
        return infra
    look = verdict.evidence.look
    if meta.cost_decided and look is not None and (look.number, look.tasks) == (meta.look, meta.tasks):
        return []  # the looks stopped here; the cost tiebreak replayed above accepted it
    if verdict.decision != Decision.ACCEPTED or look is None or (look.number, look.tasks) != (meta.look, meta.tasks):
        found = f"look {look.number} on {look.tasks} tasks" if look else "no look"
        return [f"claims {claimed}; its committed results give {verdict.decision.value} at {found}"]
    return []
