"""The offline skill proposer: turns the strongest pattern that no skill covers yet, and that
skill-impact.md does not record as rejected, into one create or patch proposal, never of a skill
that is locked or whose candidate waits for review.

Avoid-rules go into the skill `avoid-losing-actions`, prefer-rules into `prefer-scoring-actions`;
the first rule of a kind creates its skill, later ones patch it (the proposer prefers patching).
It reads what it uses through the same sandboxed library as an LLM proposer, including at least
`min_trace_reads` traces to confirm the evidence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ...contracts.roles import Library, ProposerContext, ProposerResult
from ...contracts.transcript import TranscriptCall
from ...knowledge.pages import parse_page
from ...knowledge.skills import Skill, parse_skill
from ...store.traces import Usage
from ...store.trailers import Action
from .rules import parse_rules, rule_line

SKILL_FOR = {"avoid": "avoid-losing-actions", "prefer": "prefer-scoring-actions"}
DESCRIPTION = {
    "avoid": "Actions that ended earlier episodes in a loss, and the exceptions the goal needs. "
    "Use before every action in a text game.",
    "prefer": "Actions that earned points in earlier episodes. Use whenever one of them is available.",
}
WHEN = {
    "avoid": (
        "Before choosing any action in a text game.",
        "When the action is exactly one the goal requires (listed as an exception).",
    ),
    "prefer": (
        "When an action of a listed form is available and has not been tried here yet.",
        "When the action was already tried in the current place.",
    ),
}
KIND_ORDER = {"loss": 0, "success": 1, "gain": 2}
NOTHING_MINED = (
    "no pattern could be mined from these traces: no active wiki page holds an avoid- or prefer-rule "
    "(the offline maintainer mines the actions of interactive episodes; answers, task-folder runs "
    "and your own agent's transcripts have none)"
)


@dataclass
class Candidate:
    slug: str
    kind: str
    rule: str
    pattern: str
    evidence: list[str]


def _parsed(texts: Iterable[str]) -> list[Skill]:
    skills = []
    for text in texts:
        try:
            skills.append(parse_skill(text))
        except ValueError:
            continue
    return skills


def _rejected_entries(impact: str) -> list[str]:
    return [entry for entry in impact.split("\n## ") if entry.split("\n", 1)[0].rstrip().endswith("REJECTED")]


def _nothing_to_propose(patterns: list[Candidate], off_limits: set[str]) -> str:
    if not patterns:
        return NOTHING_MINED
    held = sorted({SKILL_FOR[c.rule] for c in patterns} & off_limits)
    if held:
        return (
            "every mined pattern is covered by a skill, was rejected before, or is for a skill "
            f"locked or waiting for review ({', '.join(held)})"
        )
    return "every mined pattern is already covered by a skill or was rejected before"


class OfflineProposer:
    def __init__(self, library: Library, min_trace_reads: int):
        self.library = library
        self.min_trace_reads = min_trace_reads

    def _read(self, path: str, result: ProposerResult) -> str:
        text, _ = self.library.read(path)
        result.reads.append(path)
        return text

    def candidates(self, result: ProposerResult) -> list[Candidate]:
        """Active pages that carry a mined rule (merged and retired pages propose nothing)."""
        found = []
        for path in self.library.list("wiki/patterns"):
            if not path.endswith(".md"):
                continue
            try:
                page = parse_page(path.rsplit("/", 1)[-1][:-3], self._read(path, result))
            except LookupError:
                continue
            extra = page.meta.model_extra or {}
            if page.active and extra.get("rule") in SKILL_FOR and isinstance(extra.get("pattern"), str):
                found.append(
                    Candidate(page.slug, str(extra.get("finding")), extra["rule"], extra["pattern"], page.meta.tasks())
                )
        return found

    def run(self, context: ProposerContext) -> ProposerResult:
        """Decide by rules, and record the reads and the proposal as the transcript's one turn."""
        result = ProposerResult(proposal=None)
        self._decide(context, result)
        turn = result.transcript.add_turn(None, Usage(), ["the offline proposer: fixed rules, no model"])
        turn.calls = [
            TranscriptCall(name="read_file", arguments={"path": path}, protocol="offline") for path in result.reads
        ]
        result.transcript.outcome = result.proposal
        return result

    def _decide(self, context: ProposerContext, result: ProposerResult) -> None:
        skills = {}
        for path in self.library.list("skills"):
            if path.endswith("/SKILL.md"):
                skills[path.split("/")[1]] = self._read(path, result)
        rejected = _rejected_entries(context.impact)
        covered = {(rule.kind, rule.pattern) for rule in parse_rules(_parsed(skills.values()))}
        patterns = self.candidates(result)
        off_limits = context.off_limits()
        pool = [
            c
            for c in patterns
            if (c.rule, c.pattern) not in covered
            and not any(f"`{c.pattern}`" in entry for entry in rejected)
            and SKILL_FOR[c.rule] not in off_limits
        ]
        self._read_traces(pool, result)
        if not pool:
            result.proposal = {"action": Action.NO_ACTION, "rationale": _nothing_to_propose(patterns, off_limits)}
            return
        best = max(pool, key=lambda c: (len(c.evidence), -KIND_ORDER.get(c.kind, 3), c.slug))
        exceptions = [
            c.pattern
            for c in patterns
            if c.rule == "prefer" and best.rule == "avoid" and fnmatchcase(c.pattern, best.pattern)
        ]
        line = rule_line(best.rule, best.pattern, exceptions)
        rationale = (
            f"pattern `wiki/patterns/{best.slug}.md` has evidence in {len(best.evidence)} "
            f"episode(s) ({', '.join(best.evidence[:5])}); no active skill covers `{best.pattern}` and "
            f"skill-impact.md records no rejection of it. New rule: {line[2:]}"
        )
        name = SKILL_FOR[best.rule]
        if name in skills:
            result.proposal = {
                "action": Action.PATCH,
                "name": name,
                "rationale": rationale,
                "edits": [{"op": "append", "content": line}],
            }
        else:
            result.proposal = {
                "action": Action.CREATE,
                "name": name,
                "rationale": rationale,
                "skill_md": self._skill_md(best.rule, line),
                "purpose_md": self._purpose_md(name, best),
            }

    def _read_traces(self, pool: list[Candidate], result: ProposerResult) -> None:
        """Read the evidence traces first, then others, until `min_trace_reads` are read."""
        wanted = [task_id for c in sorted(pool, key=lambda c: -len(c.evidence)) for task_id in c.evidence]
        wanted += [path.split("/", 1)[1] for path in self.library.list("traces")]
        seen: list[str] = []
        for task_id in wanted:
            if len(seen) >= self.min_trace_reads:
                break
            if task_id in seen:
                continue
            try:
                self._read(f"traces/{task_id}", result)
                seen.append(task_id)
            except LookupError:
                continue

    @staticmethod
    def _skill_md(rule: str, line: str) -> str:
        when, when_not = WHEN[rule]
        return (
            f"---\nname: {SKILL_FOR[rule]}\ndescription: {DESCRIPTION[rule]}\n---\n\n"
            f"## When to Apply\n{when}\n\n## When NOT to Apply\n{when_not}\n\n## Instructions\n{line}\n"
        )

    @staticmethod
    def _purpose_md(name: str, best: Candidate) -> str:
        return (
            f"# {name}\n\n## Origin\nMined by the offline maintainer from train traces "
            f"({', '.join(best.evidence[:5])}).\n\n## Patterns Addressed\n"
            f"- [{best.slug}](../../wiki/patterns/{best.slug}.md)\n\n## Evolution History\n"
        )
