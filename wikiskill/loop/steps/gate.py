"""The gate: the policy's verdict on the candidate's validation against the incumbent's, both
under one setup; merge, keep the candidate as a rejected tag, or (`gate.review: human`) keep an
accepted one as `pending/rNNN-<name>` for a person. Each way the round closes with one gate
commit on main that records the evidence and appends the skill-impact entry."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ...contracts.gate import CostCheck, Evidence, Verdict
from ...contracts.runners import skill_loading
from ...core.errors import WorkspaceError
from ...knowledge.pages import read_pages
from ...knowledge.purpose import addressed_pages, record_decision
from ...store.evaluations import Evaluation
from ...store.pending import REVIEW_FILE
from ...store.rounds import pending_branch, rejected_tag, round_label
from ...store.trailers import Action, Decision, Parsed, Step, Trailers, format_message, policy_keys
from ...store.workspace import MAIN, Commit
from ..alpha_budget import Spend
from ..cost_gate import weigh_cost
from ..impact import IMPACT, ImpactEntry, append_entry, effect_report
from ..settings import CostRule, ReviewMode
from ..skill_loads import ValidationLoads, require_load, validation_loads
from .evaluation import current_evaluation, incumbent
from .looks import current_look, incumbent_at, look_trailers

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..evaluating import Evaluator
    from ..harness import StepContext
    from ..reading import Reader


def close_without_merge(
    ctx: StepContext,
    number: int,
    action: Action | None,
    name: str,
    rationale: str,
    decision: Decision,
    reason: str,
    incumbent_score: float,
    branch: str | None = None,
    changes: Mapping[str, str | None] | None = None,
    parsed: Parsed | None = None,
) -> None:
    """Close a round whose proposal never reaches validation (no_action, invalid, stale): one gate
    commit on main (with `changes`, e.g. the proposer's transcript, and `parsed`, how its proposal
    was read); a branch, if any, is kept as a rejected tag."""
    reader, publisher = ctx.reader, ctx.publisher
    where = "main (no branch)"
    if branch is not None:
        tip = reader.ws.resolve(f"refs/heads/{branch}")
        where = f"tag {rejected_tag(branch)} ({tip[:10]})"
        publisher.tag(rejected_tag(branch), tip)
    entry = ImpactEntry(
        number, action or Action.INVALID, name, decision, reason, rationale, where, incumbent=incumbent_score
    )
    publisher.commit(
        f"{round_label(number)} gate: {decision.value} ({reason})",
        Trailers(
            round=number,
            step=Step.GATE,
            decision=decision,
            action=action,
            skill=name or None,
            incumbent=incumbent_score,
            parsed=parsed,
        ),
        {**(changes or {}), IMPACT: append_entry(reader.ws.read_file(MAIN, IMPACT), entry)},
        body=reason,
    )
    if branch is not None:
        publisher.delete_branch(branch)


@dataclass(frozen=True)
class Judged:
    """The gate's verdict on a candidate branch, with what the verdict rests on."""

    number: int
    action: Action
    name: str
    rationale: str
    verdict: Verdict
    validation: Commit
    """The validation (or the sequential look) the verdict read."""
    candidate: Evaluation
    main_eval: Evaluation
    merged: str
    """The tree of main merged with the candidate: what a merge publishes."""
    tip: str
    spend: Spend | None = None
    """The verdict's share of `gate.alpha_budget`."""
    recorded: Mapping[str, str] = field(default_factory=dict)
    """The policy's settings of its own, as trailers (`GatePolicy.trailers`)."""
    loads: ValidationLoads | None = None
    """How the agent came to the changed skill during validation (None: a retire)."""

    @property
    def accepted(self) -> bool:
        return self.verdict.decision == Decision.ACCEPTED

    @property
    def gain(self) -> bool:
        """The candidate scored higher than main on validation."""
        return self.candidate.mean > self.main_eval.mean

    def trailers(self, decision: Decision, **more: object) -> Trailers:
        return Trailers(
            round=self.number,
            step=Step.GATE,
            decision=decision,
            action=self.action,
            skill=self.name,
            score=self.candidate.mean,
            incumbent=self.main_eval.mean,
            incumbent_fingerprint=self.main_eval.fingerprint,
            **_evidence_trailers(self.verdict.evidence),
            **(self.spend.trailers() if self.spend is not None else {}),
            **self.recorded,
            **(self.loads.trailers(self.gain) if self.loads is not None else {}),
            **more,
        )

    def evaluation_trailers(self) -> dict[str, object]:
        """What an accepted merge or a pending candidate records of its own evaluation: the next
        incumbent is found in git, and `audit` checks it."""
        return {
            "skills_id": self.candidate.skills_id,
            "setup": self.candidate.setup,
            "fingerprint": self.candidate.fingerprint,
            "results": self.validation.meta.results,
            "incumbent_results": self.validation.meta.incumbent_results,
        }

    def entry(self, decision: Decision, reason: str, where: str, diff: str) -> ImpactEntry:
        return ImpactEntry(
            self.number,
            self.action,
            self.name,
            decision,
            reason,
            self.rationale,
            where,
            self.candidate.mean,
            self.main_eval.mean,
            self.verdict.evidence,
            diff,
            self.loaded_lines,
        )

    @property
    def loaded_lines(self) -> list[str]:
        """How often the agent loaded the changed skill during validation, where it was counted."""
        line = self.loads.line(self.gain) if self.loads is not None else None
        return [line] if line else []

    def body(self, reason: str | None = None) -> str:
        return "\n".join([reason or self.verdict.reason, *self.loaded_lines, *_task_lines(self.verdict.evidence)])


def judge_candidate(evaluator: Evaluator, state: RoundState) -> Judged:
    """The policy's verdict on the candidate on `state.branch`, from the validation recorded on
    it; refused when that validation is not of main's skills plus the proposal under the current
    setup."""
    reader, label = evaluator.reader, round_label(state.number)
    validated = current_evaluation(evaluator, state, state.validations)
    if validated is None or state.proposal is None or state.tip is None:
        raise WorkspaceError(f"{label}: the gate found no current validation on {state.branch}")
    validation, candidate = validated
    looks = reader.policy.plan().looks
    if looks is not None:
        look = current_look(evaluator, state, looks)
        if look is None or look.meta.crossed is None:
            raise WorkspaceError(f"{label}: the gate found no finished sequential validation on {state.branch}")
        validation, main_eval = look, incumbent_at(reader, look)
    else:
        main_eval = incumbent(evaluator)
    merged = reader.ws.merged_tree(MAIN, state.tip)
    if reader.skills_id(merged) != candidate.skills_id or candidate.setup != main_eval.setup:
        raise WorkspaceError(
            f"{label}: the validation on {state.branch} is not of main's skills plus the "
            "proposal under the current setup; run `wikiskill evolve` again"
        )
    action, name = state.proposal.meta.action or Action.INVALID, state.proposal.meta.skill or ""
    rationale = reader.ws.body(state.proposal.sha).split("\n\n")[0].strip()
    spend = reader.spend
    verdict = weigh_cost(
        reader.gate_settings,
        _verdict(evaluator, state, candidate, main_eval, action == Action.RETIRE),
        candidate,
        main_eval,
    )
    tip, loading = state.tip, skill_loading(reader.config.agent)
    loads = validation_loads(
        lambda: reader.ws.read_file(tip, validation.meta.results or "") or "", action, name, loading
    )
    verdict = require_load(verdict, loads, reader.config.gate.require_load)
    return Judged(
        state.number,
        action,
        name,
        rationale,
        verdict,
        validation,
        candidate,
        main_eval,
        merged,
        state.tip,
        spend,
        policy_keys(reader.policy.trailers()),
        loads,
    )


def merge_candidate(ctx: StepContext, judged: Judged, branch: str, reason: str | None = None, **decided: object) -> str:
    """Merge an accepted candidate into main in one commit that records its evaluation, the
    skill-impact entry and the skill's PURPOSE.md (`decided`: the trailers of a person's decision)."""
    ws = ctx.reader.ws
    reason = reason or judged.verdict.reason
    where = f"merged from {branch} ({judged.tip[:10]})"
    entry = judged.entry(Decision.ACCEPTED, reason, where, ws.diff(MAIN, judged.tip, "skills"))
    changes = {IMPACT: append_entry(ws.read_file(MAIN, IMPACT), entry)}
    if judged.action != Action.RETIRE:
        changes.update(_purpose_after_merge(ctx.reader, judged))
    trailers = judged.trailers(Decision.ACCEPTED, **judged.evaluation_trailers(), **decided)
    verb = "accepted by a person" if decided else Decision.ACCEPTED.value
    subject = f"{round_label(judged.number)} gate: {verb} {judged.name} ({judged.verdict.reason})"
    return ctx.publisher.commit(
        subject, trailers, changes, body=judged.body(reason), base=judged.merged, extra_parents=(judged.tip,)
    )


class Gate:
    kind: ClassVar[Step] = Step.GATE

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        return state.closed or state.tip is None

    def run(self, ctx: StepContext, state: RoundState) -> None:
        reader, publisher, branch = ctx.reader, ctx.publisher, state.candidate
        publisher.begin_step()
        judged = judge_candidate(ctx.evaluator, state)
        label, name, tip = round_label(state.number), judged.name, judged.tip
        decision = judged.verdict.decision
        if judged.accepted and reader.config.gate.review is ReviewMode.HUMAN:
            decision = Decision.PENDING
            keep_pending(ctx, branch, judged)
        elif judged.accepted:
            merge_candidate(ctx, judged, branch)
        else:
            tag = rejected_tag(branch)
            entry = judged.entry(
                decision, judged.verdict.reason, f"tag {tag} ({tip[:10]})", reader.ws.diff(MAIN, tip, "skills")
            )
            publisher.tag(tag, tip)
            publisher.commit(
                f"{label} gate: {decision.value} {name} ({judged.verdict.reason})",
                judged.trailers(decision),
                {IMPACT: append_entry(reader.ws.read_file(MAIN, IMPACT), entry)},
                body=judged.body(),
            )
        publisher.delete_branch(branch)
        reader.reporter.info(f"{label} gate: {decision.value} {name}")


def keep_pending(ctx: StepContext, branch: str, judged: Judged) -> None:
    """`gate.review: human`: the accepted candidate waits for a person on `pending/rNNN-<name>`,
    whose evidence commit (the verdict's trailers, the evaluation and raw/rNNN/review.json)
    `wikiskill review` reads; the round closes with a `pending` gate commit on main. Each write
    is checked first, so a run killed between them redoes only what is missing."""
    ws, label = ctx.publisher.ws, round_label(judged.number)
    pending = pending_branch(branch)
    if ws.head(pending) is None:
        ws.create_branch(pending, judged.tip)
    if ws.head(pending) == judged.tip:
        record = review_record(ctx.evaluator, judged)
        message = format_message(
            f"{label} gate: pending {judged.name} ({judged.verdict.reason})",
            judged.trailers(Decision.PENDING, **judged.evaluation_trailers(), cost_usd=0.0),
            judged.body(),
        )
        ws.commit({f"raw/{label}/{REVIEW_FILE}": record}, message, branch=pending)
    evidence = ws.head(pending) or ""
    reason = f"{judged.verdict.reason}; waits for a person's review (`wikiskill review`)"
    entry = judged.entry(Decision.PENDING, reason, f"{pending} ({evidence[:10]})", ws.diff(MAIN, judged.tip, "skills"))
    ctx.publisher.commit(
        f"{label} gate: pending {judged.name} ({judged.verdict.reason})",
        judged.trailers(Decision.PENDING, candidate=evidence),
        {IMPACT: append_entry(ws.read_file(MAIN, IMPACT), entry)},
        body=judged.body(reason),
    )


def review_record(evaluator: Evaluator, judged: Judged) -> str:
    """raw/rNNN/review.json: the verdict's per-task evidence and the change in the agent's
    per-task tokens and cost, for `wikiskill review`."""
    evidence = judged.verdict.evidence
    candidate_rows = _rows(evaluator.reader.ws.read_file(judged.tip, judged.validation.meta.results or ""))
    main_rows = _rows(_incumbent_results(evaluator, judged))
    tasks = [task for task in candidate_rows if task in main_rows]
    record = {
        "round": judged.number,
        "action": judged.action.value,
        "skill": judged.name,
        "reason": judged.verdict.reason,
        "candidate": judged.candidate.mean,
        "incumbent": judged.main_eval.mean,
        "policy": evidence.policy,
        "tasks": evidence.n,
        "mean_diff": evidence.mean_diff,
        "interval": evidence.interval_text(),
        "p_value": evidence.p_value,
        "fixed": evidence.fixed,
        "broken": evidence.broken,
        "helped": evidence.helped,
        "hurt": evidence.hurt,
        "left_out": evidence.left_out,
        "cost": {
            "tasks": len(tasks),
            "candidate_tokens": _mean([candidate_rows[task].get("tokens") for task in tasks]),
            "incumbent_tokens": _mean([main_rows[task].get("tokens") for task in tasks]),
            "candidate_usd": _mean([candidate_rows[task].get("cost") for task in tasks]),
            "incumbent_usd": _mean([main_rows[task].get("cost") for task in tasks]),
        },
    }
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def _incumbent_results(evaluator: Evaluator, judged: Judged) -> str | None:
    """Main's per-task outcomes the verdict compared with: a sequential look's main side on the
    branch, else main's recorded evaluation."""
    ws = evaluator.reader.ws
    if judged.validation.meta.incumbent_results:
        return ws.read_file(judged.tip, judged.validation.meta.incumbent_results)
    found = evaluator.recorded(MAIN)
    if found is None or not found[0].meta.results:
        return None
    return ws.read_file(found[0].sha, found[0].meta.results)


def _rows(text: str | None) -> dict[str, dict[str, object]]:
    rows = {}
    for line in (text or "").splitlines():
        try:
            row = json.loads(line)
            rows[str(row["id"])] = row
        except (ValueError, KeyError, TypeError):
            continue
    return rows


def _mean(values: list[object]) -> float:
    numbers = [float(value) for value in values if isinstance(value, (int, float))]
    return sum(numbers) / len(numbers) if numbers else 0.0


def _verdict(
    evaluator: Evaluator, state: RoundState, candidate: Evaluation, main_eval: Evaluation, at_least: bool
) -> Verdict:
    reader = evaluator.reader
    policy = reader.policy
    plan = policy.plan()
    if plan.looks is not None:  # the looks recorded on the branch, replayed: the same verdict
        return plan.looks.judge_looks(candidate, main_eval, len(reader.tasks("val")), at_least)
    verdict = policy.judge(candidate, main_eval, at_least)
    if verdict.decision != Decision.ACCEPTED or not plan.confirms:
        return verdict
    confirmed = current_evaluation(evaluator, state, state.confirmations, reader.config.gate.repeats)
    if confirmed is None:
        raise WorkspaceError(f"{round_label(state.number)}: the gate found no confirmation run on {state.branch}")
    second = policy.judge(confirmed[1], main_eval, at_least)
    if second.decision != Decision.ACCEPTED:
        return Verdict(Decision.REJECTED, f"{verdict.reason}; not confirmed: {second.reason}", second.evidence)
    return Verdict(Decision.ACCEPTED, f"{verdict.reason}; confirmed: {second.reason}", verdict.evidence)


def _evidence_trailers(evidence: Evidence) -> dict[str, object]:
    looked = look_trailers(evidence.look) if evidence.look is not None else {}
    return {
        "policy": evidence.policy,
        "tasks": evidence.n,
        "mean_diff": evidence.mean_diff,
        "interval": evidence.interval_text(),
        "p_value": evidence.p_value,
        "fixed": len(evidence.fixed),
        "broken": len(evidence.broken),
        "infra": len(evidence.left_out) or None,
        **looked,
        **(cost_trailers(evidence.cost) if evidence.cost is not None else {}),
    }


def cost_trailers(check: CostCheck) -> dict[str, object]:
    return {
        "cost_rule": check.rule,
        "cost_unit": check.unit,
        "cost_candidate": check.candidate,
        "cost_main": check.incumbent,
        "cost_ratio": check.ratio if math.isfinite(check.ratio) else None,
        "cost_limit": check.limit,
        "cost_p_value": check.p_value,
        "cost_confidence": check.confidence,
        "cost_tasks": check.n,
        "cost_passed": check.passed,
        "cost_decided": check.decided,
        "noninferiority": check.noninferiority if check.rule is CostRule.TIEBREAK else None,
        "score_floor": check.floor if check.floor is not None and math.isfinite(check.floor) else None,
    }


def _task_lines(evidence: Evidence) -> list[str]:
    lines = effect_report(evidence.task_effect)
    return lines + [f"Left out as infra: {task}: {reason}" for task, reason in evidence.left_out.items()]


def _purpose_after_merge(reader: Reader, judged: Judged) -> dict[str, str]:
    """The accepted skill's PURPOSE.md with Patterns Addressed rebuilt from the wiki and the
    decision recorded (PURPOSE.md reaches no prompt, so the merged skills stay the validated ones)."""
    path = f"skills/{judged.name}/PURPOSE.md"
    purpose = reader.ws.read_file(judged.merged, path) or ""
    pages = read_pages(reader.ws.read_files(MAIN, "wiki"))
    return {
        path: record_decision(
            purpose,
            judged.name,
            judged.number,
            judged.action,
            Decision.ACCEPTED.value,
            judged.candidate.mean,
            judged.main_eval.mean,
            addressed_pages(purpose, judged.rationale, judged.name, pages),
            pages,
            judged.verdict.evidence.effect(),
        )
    }
