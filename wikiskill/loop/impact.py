"""Entries of wiki/skill-impact.md: one per proposal or rollback, with its evidence and diff."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..contracts.gate import CostCheck, Effect, Evidence
from ..knowledge.wiki import IMPACT
from ..store.trailers import Decision
from .settings import CostRule

__all__ = ["IMPACT", "ImpactEntry", "append_entry", "cost_lines", "effect_lines", "effect_report"]
SHOWN_TASKS = 20


@dataclass(frozen=True)
class ImpactEntry:
    round: int
    action: str
    """The proposal's `Action`, or `rollback`."""
    name: str
    decision: Decision
    reason: str
    rationale: str = ""
    where: str = ""
    candidate: float | None = None
    incumbent: float | None = None
    evidence: Evidence | None = None
    diff: str = ""
    notes: list[str] = field(default_factory=list)

    def render(self) -> str:
        def score(value: float | None) -> str:
            return "—" if value is None else f"{value:.3f}"

        lines = [
            f"## r{self.round:03d} · {self.action} · {self.name or '(none)'} · {self.decision.value.upper()}",
            "",
            f"- Round: {self.round}",
            f"- Action: {self.action}",
            f"- Skill: {self.name or '(none)'}",
            f"- Candidate score: {score(self.candidate)}",
            f"- Incumbent score: {score(self.incumbent)}",
            f"- Decision: {self.decision.value} — {self.reason}",
        ]
        if self.evidence is not None:
            lines += _evidence_lines(self.evidence)
        lines += [f"- Kept at: {self.where}", f"- Rationale: {self.rationale or '(none given)'}"]
        lines += [f"- Note: {note}" for note in self.notes]
        if self.diff.strip():
            fence = "````" if "```" in self.diff else "```"
            lines += ["", f"{fence}diff", self.diff.rstrip(), fence]
        return "\n".join(lines) + "\n"


def _evidence_lines(evidence: Evidence) -> list[str]:
    lines = [f"- Policy: {evidence.policy} (n = {evidence.n} tasks, mean difference {evidence.mean_diff:+.4f})"]
    if evidence.interval is not None:
        lines.append(f"- Interval: {evidence.interval_text()}")
    if evidence.p_value is not None:
        lines.append(f"- p-value: {evidence.p_value:.4f}")
    if evidence.look is not None:
        lines.append(f"- Sequential: {evidence.look.text()}")
    if evidence.cost is not None:
        lines += cost_lines(evidence.cost)
    lines.append(f"- Effect: {evidence.effect()}")
    lines += effect_lines(evidence.task_effect, SHOWN_TASKS)
    if evidence.left_out:
        lines.append(f"- Left out as infra: {len(evidence.left_out)} ({infra_text(evidence.left_out)})")
    return lines


def cost_lines(check: CostCheck) -> list[str]:
    """`- Cost: ...` (and the non-inferiority test of a `tiebreak`): what `gate.cost` weighed."""
    decided = {
        CostRule.TIEBREAK: "accepted as cheaper at a score no worse than main's",
        CostRule.BOUND: "rejected: the score gain costs too much",
    }
    lines = [f"- Cost ({check.rule.value}): {check.text()}, change {check.change:+.6g} per task"]
    if check.floor is not None:
        lines.append(f"- Non-inferiority: score gain >= {check.floor:+.4f} (needs above -{check.noninferiority:g})")
    if check.decided:
        lines.append(f"- Cost decided: {decided[check.rule]}")
    return lines


def effect_lines(effect: Effect, shown: int | None = None) -> list[str]:
    """`- Helped: ...` and `- Hurt: ...`, the tasks behind `Effect.text` (the newly solved and
    no longer solved ones marked), at most `shown` of each."""
    lines = []
    for label, tasks, marked in (
        ("Helped", effect.helped, set(effect.fixed)),
        ("Hurt", effect.hurt, set(effect.broken)),
    ):
        mark = " (newly solved)" if label == "Helped" else " (no longer solved)"
        names = [f"{task}{mark if task in marked else ''}" for task in tasks[:shown]]
        more = f" and {len(tasks) - shown} more" if shown is not None and len(tasks) > shown else ""
        if tasks:
            lines.append(f"- {label}: {', '.join(names)}{more}")
    return lines


def effect_report(effect: Effect) -> list[str]:
    """`Effect: ...` and its `Helped: ...`, `Hurt: ...` lines: how the gate's commit body, and so
    `show`, and `review` state a candidate's effect."""
    return [f"Effect: {effect.text()}", *(line[2:] for line in effect_lines(effect))]


def infra_text(left_out: dict[str, str]) -> str:
    """`task: reason; ...` of the tasks left out as infrastructure failures, the first few."""
    shown = "; ".join(f"{task}: {reason}" for task, reason in list(left_out.items())[:SHOWN_TASKS])
    return shown + (f" and {len(left_out) - SHOWN_TASKS} more" if len(left_out) > SHOWN_TASKS else "")


def append_entry(impact: str | None, entry: ImpactEntry) -> str:
    return f"{(impact or '').rstrip()}\n\n{entry.render()}"
