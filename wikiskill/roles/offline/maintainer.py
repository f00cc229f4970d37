"""The offline wiki maintainer: mines sampled traces into pattern pages.

It finds the actions that preceded losses, the actions that earned points, the actions common
to every won episode and missing from every failed one, and repeated-action loops; each becomes
a page with the task ids and exact action sequences as evidence. The reply has the same shape as
an LLM maintainer's, so the harness validates and applies it the same way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import yaml

from ...contracts.roles import Check, MaintainerResult
from ...contracts.transcript import Transcript
from ...knowledge.pages import PageKind, page_slug
from ...knowledge.wiki_requests import MaintainerOutput, PageCreate, WikiView
from ...store.traces import Trajectory, Usage
from ..settings import Role
from .rules import group_actions, shape_key

CONTEXT_STEPS = 3
MAX_EVIDENCE_LINES = 6

DESCRIPTION = {
    "loss": "Episodes were lost right after an action of the form `{pattern}`.",
    "gain": "Actions of the form `{pattern}` earned points.",
    "success": "Every won episode in the sample does `{pattern}`; no failed one does.",
    "loop": "The agent repeated `{pattern}` several times in one episode without progress.",
}
WHY = {
    "loss": (
        "Episodes ended in a loss right after an action of this form. The agent has no rule "
        "telling it the action is irreversible, so it takes it while exploring."
    ),
    "gain": (
        "Actions of this form earned points. The agent found them only by chance while "
        "exploring and spent its steps on actions that earn nothing."
    ),
    "success": (
        "Every won episode in the sample contains this action and no failed one does: "
        "it is a step the failures never reached."
    ),
    "loop": (
        "The agent repeated the same action without progress: its exploration ran out of "
        "untried actions where it stood and it kept retrying."
    ),
}


@dataclass
class Finding:
    kind: str  # loss | gain | success | loop
    rule: str | None  # avoid | prefer | None (knowledge only)
    pattern: str
    evidence: list[tuple[str, list[str], str]]  # (task id, action sequence, outcome)

    @property
    def slug(self) -> str:
        prefix = {"loss": "avoid", "gain": "prefer", "success": "finish-with", "loop": "loop"}[self.kind]
        return page_slug(f"{prefix} {self.pattern.replace('*', 'x')}")

    def title(self) -> str:
        return {
            "loss": f"Losing after `{self.pattern}`",
            "gain": f"Points from `{self.pattern}`",
            "success": f"Won episodes all do `{self.pattern}`",
            "loop": f"Repeating `{self.pattern}`",
        }[self.kind]

    def fix(self) -> str:
        if self.rule == "avoid":
            return f"Avoid `{self.pattern}` unless the goal requires exactly that action."
        if self.rule == "prefer":
            return f"Prefer `{self.pattern}` whenever it is available."
        return "When every action here was tried, move to an unexplored room instead of repeating."

    def evidence_lines(self) -> list[str]:
        lines = []
        for task_id, sequence, outcome in self.evidence[:MAX_EVIDENCE_LINES]:
            lines.append(f"- {task_id}: " + " → ".join(f"`{a}`" for a in sequence) + f" ({outcome})")
        return lines

    def page(self) -> str:
        front = yaml.safe_dump({"finding": self.kind, "rule": self.rule, "pattern": self.pattern}, sort_keys=False)
        return "\n".join(
            [
                f"---\n{front.strip()}\n---",
                "",
                f"# {self.title()}",
                "",
                "## Description",
                "",
                DESCRIPTION[self.kind].format(pattern=self.pattern),
                "",
                "## Root cause",
                "",
                WHY[self.kind],
                "",
                "## Evidence",
                "",
                "Exact action sequences, last action last:",
                *self.evidence_lines(),
                "",
                "## Fix",
                "",
                self.fix(),
                "",
            ]
        )

    def create(self) -> PageCreate:
        return PageCreate(
            name=self.slug,
            title=self.title(),
            content=self.page(),
            summary=self.summary(),
            kind=PageKind.SUCCESS if self.kind in ("gain", "success") else PageKind.FAILURE,
            evidence=sorted({task_id for task_id, _, _ in self.evidence}),
        )

    def summary(self) -> str:
        problem = {"loss": "lost after", "gain": "points from", "success": "every win does", "loop": "repeats"}[
            self.kind
        ]
        cause = {
            "loss": "irreversible action taken blindly",
            "gain": "found only by chance",
            "success": "failures never reach it",
            "loop": "exploration exhausted",
        }[self.kind]
        return f"{problem} `{self.pattern}` + {cause} + {self.fix()}"


def _outcome(trace: Trajectory) -> str:
    verdict = "won" if trace.won else "lost" if trace.lost else "unfinished"
    return f"{verdict}, score {trace.score:.2f}"


def _context(trace: Trajectory, index: int) -> list[str]:
    return [step.action for step in trace.steps[max(0, index - CONTEXT_STEPS + 1) : index + 1]]


def mine(traces: list[Trajectory]) -> list[Finding]:
    findings: list[Finding] = []
    losses = [(t, len(t.steps) - 1) for t in traces if t.lost and t.steps]
    gains = [(t, i) for t in traces for i, s in enumerate(t.steps) if s.score > (t.steps[i - 1].score if i else 0.0)]
    for kind, rule, events in (("loss", "avoid", losses), ("gain", "prefer", gains)):
        for group in group_actions([(t.task_id, t.steps[i].action) for t, i in events]):
            members = [(t, i) for t, i in events if shape_key(t.steps[i].action) == group.key]
            evidence = [(t.task_id, _context(t, i), _outcome(t)) for t, i in members]
            findings.append(Finding(kind, rule, group.pattern(), evidence))
    findings += _success_actions(traces) + _loops(traces)
    return findings


def _success_actions(traces: list[Trajectory]) -> list[Finding]:
    won = [t for t in traces if t.won]
    failed = [t for t in traces if not t.won]
    if len(won) < 2 or not failed:
        return []
    common = set.intersection(*({s.action for s in t.steps} for t in won))
    never_failed = common - {s.action for t in failed for s in t.steps}
    return [
        Finding(
            "success",
            "prefer",
            action,
            [(t.task_id, [s.action for s in t.steps][-CONTEXT_STEPS:], _outcome(t)) for t in won],
        )
        for action in sorted(never_failed)
    ]


def _loops(traces: list[Trajectory]) -> list[Finding]:
    findings = []
    for trace in traces:
        counts = Counter(step.action for step in trace.steps)
        action, times = counts.most_common(1)[0] if counts else ("", 0)
        if times >= 3:
            findings.append(Finding("loop", None, action, [(trace.task_id, [action] * times, _outcome(trace))]))
    return findings[:2]


class OfflineMaintainer:
    """Creates one page per finding; for a page that exists, the harness adds the new evidence."""

    def run(
        self,
        round_number: int,
        wiki: WikiView,
        traces: list[Trajectory],
        train_score: float,
        passed: int,
        total: int,
        max_chars: int,
        check: Check = lambda output, shown: [],
    ) -> MaintainerResult:
        findings = {f.slug: f for f in mine(traces)}
        creates = [findings[slug].create() for slug in sorted(findings)]
        summary = (
            f"Round {round_number}: train {passed}/{total} won (mean score {train_score:.3f}). "
            f"Mined {len(traces)} sampled traces into {len(creates)} pattern(s): "
            f"{', '.join(c.name for c in creates) or 'none'}."
        )
        output = MaintainerOutput(create_patterns=creates, append_log=summary)
        transcript = Transcript(role=Role.MAINTAINER, outcome=output.model_dump())
        transcript.add_turn(None, Usage(), ["the offline maintainer: fixed rules, no model"])
        return MaintainerResult(output, attempts=1, transcript=transcript)
