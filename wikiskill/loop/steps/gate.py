"""The gate: the policy's verdict on the candidate's validation against the incumbent's, both
under one setup; merge, or keep the candidate as a rejected tag. Either way the round closes with
one gate commit on main that records the evidence and appends the skill-impact entry."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...contracts.gate import CostCheck, Evidence, Verdict
from ...core.config import CostRule
from ...core.errors import WorkspaceError
from ...knowledge.pages import read_pages
from ...knowledge.purpose import addressed_pages, record_decision
from ...store.evaluations import Evaluation
from ...store.rounds import rejected_tag, round_label
from ...store.trailers import Action, Decision, Step, Trailers
from ...store.workspace import MAIN
from ..cost_gate import weigh_cost
from ..impact import IMPACT, ImpactEntry, append_entry, effect_lines
from .evaluation import current_evaluation, incumbent
from .looks import current_look, incumbent_at, look_trailers

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import Harness


def close_without_merge(
    harness: Harness,
    number: int,
    action: Action | None,
    name: str,
    rationale: str,
    decision: Decision,
    reason: str,
    incumbent_score: float,
    branch: str | None = None,
    changes: dict[str, str | None] | None = None,
) -> None:
    """Close a round whose proposal never reaches validation (no_action, invalid, stale): one gate
    commit on main (with `changes`, e.g. the proposer's transcript); a branch, if any, is kept as a
    rejected tag."""
    where = "main (no branch)"
    if branch is not None:
        tip = harness.ws.head(branch)
        where = f"tag {rejected_tag(branch)} ({tip[:10]})"
        harness.ws.tag(rejected_tag(branch), tip, force=True)
    entry = ImpactEntry(
        number, action or Action.INVALID, name, decision, reason, rationale, where, incumbent=incumbent_score
    )
    harness.commit(
        f"{round_label(number)} gate: {decision.value} ({reason})",
        Trailers(
            round=number,
            step=Step.GATE,
            decision=decision,
            action=action,
            skill=name or None,
            incumbent=incumbent_score,
        ),
        {**(changes or {}), IMPACT: append_entry(harness.ws.read_file(MAIN, IMPACT), entry)},
        body=reason,
    )
    if branch is not None:
        harness.ws.delete_branch(branch)


class Gate:
    kind = Step.GATE

    def done(self, harness: Harness, state: RoundState) -> bool:
        return state.closed or state.tip is None

    def run(self, harness: Harness, state: RoundState) -> None:
        number, label = state.number, round_label(state.number)
        harness.begin_step()
        validated = current_evaluation(harness, state, state.validations)
        if validated is None or state.proposal is None:
            raise WorkspaceError(f"{label}: the gate found no current validation on {state.branch}")
        validation, candidate = validated
        looks = harness.policy.plan().looks
        if looks is not None:
            look = current_look(harness, state, looks)
            if look is None or look.meta.crossed is None:
                raise WorkspaceError(f"{label}: the gate found no finished sequential validation on {state.branch}")
            validation, main_eval = look, incumbent_at(harness, look)
        else:
            main_eval = incumbent(harness)
        merged = harness.ws.merged_tree(MAIN, state.tip)
        if harness.skills_id(merged) != candidate.skills_id or candidate.setup != main_eval.setup:
            raise WorkspaceError(
                f"{label}: the validation on {state.branch} is not of main's skills plus the "
                "proposal under the current setup; run `wikiskill evolve` again"
            )
        action, name = state.proposal.meta.action or Action.INVALID, state.proposal.meta.skill or ""
        rationale = harness.ws.body(state.proposal.sha).split("\n\n")[0].strip()
        verdict = weigh_cost(
            harness.config.gate,
            self._verdict(harness, state, candidate, main_eval, action == Action.RETIRE),
            candidate,
            main_eval,
        )
        tip = state.tip
        tag = rejected_tag(state.branch)
        accepted = verdict.decision == Decision.ACCEPTED
        where = f"merged from {state.branch} ({tip[:10]})" if accepted else f"tag {tag} ({tip[:10]})"
        entry = ImpactEntry(
            number,
            action,
            name,
            verdict.decision,
            verdict.reason,
            rationale,
            where,
            candidate.mean,
            main_eval.mean,
            verdict.evidence,
            harness.ws.diff(MAIN, tip, "skills"),
        )
        changes = {IMPACT: append_entry(harness.ws.read_file(MAIN, IMPACT), entry)}
        trailers = Trailers(
            round=number,
            step=self.kind,
            decision=verdict.decision,
            action=action,
            skill=name,
            score=candidate.mean,
            incumbent=main_eval.mean,
            incumbent_fingerprint=main_eval.fingerprint,
            **_evidence_trailers(verdict.evidence),
        )
        subject = f"{label} gate: {verdict.decision.value} {name} ({verdict.reason})"
        body = "\n".join([verdict.reason, *_task_lines(verdict.evidence)])
        if accepted:
            if action != Action.RETIRE:
                changes.update(
                    _purpose_after_merge(
                        harness, merged, number, action, name, rationale, candidate, main_eval, verdict.evidence
                    )
                )
            # the merge records the evaluation of its own skills: the next incumbent is found in git
            trailers = trailers.model_copy(
                update={
                    "skills_id": candidate.skills_id,
                    "setup": candidate.setup,
                    "fingerprint": candidate.fingerprint,
                    "results": validation.meta.results,
                    "incumbent_results": validation.meta.incumbent_results,
                }
            )
            harness.commit(subject, trailers, changes, body=body, base=merged, extra_parents=(tip,))
        else:
            harness.ws.tag(tag, tip, force=True)
            harness.commit(subject, trailers, changes, body=body)
        harness.ws.delete_branch(state.branch)
        harness.reporter.info(f"{label} gate: {verdict.decision.value} {name}")

    def _verdict(self, harness: Harness, state: RoundState, candidate, main_eval, at_least: bool) -> Verdict:
        plan = harness.policy.plan()
        if plan.looks is not None:  # the looks recorded on the branch, replayed: the same verdict
            return plan.looks.judge_looks(candidate, main_eval, len(harness.benchmark.tasks("val")), at_least)
        verdict = harness.policy.judge(candidate, main_eval, at_least)
        if verdict.decision != Decision.ACCEPTED or not plan.confirms:
            return verdict
        confirmed = current_evaluation(harness, state, state.confirmations, harness.config.gate.repeats)
        if confirmed is None:
            raise WorkspaceError(f"{round_label(state.number)}: the gate found no confirmation run on {state.branch}")
        second = harness.policy.judge(confirmed[1], main_eval, at_least)
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
    lines = [f"Effect: {evidence.effect()}", *(line[2:] for line in effect_lines(evidence))]
    return lines + [f"Left out as infra: {task}: {reason}" for task, reason in evidence.left_out.items()]


def _purpose_after_merge(
    harness: Harness,
    merged: str,
    number: int,
    action: Action,
    name: str,
    rationale: str,
    candidate: Evaluation,
    main_eval: Evaluation,
    evidence: Evidence,
) -> dict[str, str]:
    """The accepted skill's PURPOSE.md with Patterns Addressed rebuilt from the wiki and the
    decision recorded (PURPOSE.md reaches no prompt, so the merged skills stay the validated ones)."""
    path = f"skills/{name}/PURPOSE.md"
    purpose = harness.ws.read_file(merged, path) or ""
    pages = read_pages(harness.ws.read_files(MAIN, "wiki"))
    return {
        path: record_decision(
            purpose,
            name,
            number,
            action,
            Decision.ACCEPTED.value,
            candidate.mean,
            main_eval.mean,
            addressed_pages(purpose, rationale, name, pages),
            pages,
            evidence.effect(),
        )
    }
