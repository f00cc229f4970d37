"""The validation gate and the skill-impact entries it writes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GateDecision:
    decision: str  # accepted | rejected | no_action
    reason: str


def decide(candidate: float, incumbent: float) -> GateDecision:
    """Accept only a strict improvement: ties are rejected (a change must earn its place)."""
    if candidate > incumbent:
        return GateDecision("accepted", f"val {candidate:.3f} > incumbent {incumbent:.3f}")
    relation = "=" if candidate == incumbent else "<"
    return GateDecision("rejected", f"val {candidate:.3f} {relation} incumbent {incumbent:.3f} (needs a strict improvement)")


def impact_entry(
    round_number: int,
    action: str,
    name: str,
    rationale: str,
    decision: GateDecision,
    candidate: float | None,
    incumbent: float | None,
    where: str,
    diff: str = "",
    notes: list[str] | None = None,
) -> str:
    """One skill-impact.md entry: metadata, rationale, scores, decision, the unified diff."""
    score = lambda value: "—" if value is None else f"{value:.3f}"  # noqa: E731
    lines = [
        f"## r{round_number:03d} · {action} · {name or '(none)'} · {decision.decision.upper()}",
        "",
        f"- Round: {round_number}",
        f"- Action: {action}",
        f"- Skill: {name or '(none)'}",
        f"- Candidate score: {score(candidate)}",
        f"- Incumbent score: {score(incumbent)}",
        f"- Decision: {decision.decision} — {decision.reason}",
        f"- Kept at: {where}",
        f"- Rationale: {rationale or '(none given)'}",
    ]
    lines += [f"- Note: {note}" for note in notes or []]
    if diff.strip():
        fence = "````" if "```" in diff else "```"
        lines += ["", f"{fence}diff", diff.rstrip(), fence]
    return "\n".join(lines) + "\n"
