"""Trajectories: what the task agent did on one task, stored as raw/rNNN/train/<task_id>.json (and real
agent sessions imported by `wikiskill ingest`, as raw/rNNN/ingested/<id>.json)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, Field

from ..benchmarks.base import BenchmarkKind

SESSION = "session"
"""The kind of a real agent session that `wikiskill ingest` imported (no suite played it)."""


class TrajectorySplit(StrEnum):
    """The folders of a round (raw/rNNN/<split>/) that keep whole trajectories: its train tasks and
    the sessions ingested for it; val and test keep one outcome row per task."""

    TRAIN = "train"
    INGESTED = "ingested"


KEPT_WHOLE = frozenset(split.value for split in TrajectorySplit)
"""The splits whose scorer feedback reaches the roles: train and the sessions ingested as train experience."""


class Usage(BaseModel):
    """Tokens, cost and calls, summed per role and per step."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached_tokens: int = 0
    """Prompt tokens the provider read from its prompt cache (part of `prompt_tokens`, billed at
    its cache-read price)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class TraceStep(BaseModel):
    """One turn of an interactive episode."""

    action: str
    observation: str
    score: float
    note: str | None = None


class Outcome(StrEnum):
    """How an ingested session ended, as the person who ingested it says (no benchmark scored it)."""

    SUCCESS = "success"
    FAILURE = "failure"
    UNKNOWN = "unknown"

    @property
    def score(self) -> float:
        return 1.0 if self is Outcome.SUCCESS else 0.0


class FailureKind(StrEnum):
    """Why a task has no ordinary score: the machinery around it failed (`infra`: left out of every
    comparison, never scored), the agent, or a check running its code, ran out of time
    (`timeout`), or the agent repeated one action with one result until it was stopped (`stuck`);
    `timeout` and `stuck` are the task's own failures, scored as such."""

    INFRA = "infra"
    TIMEOUT = "timeout"
    STUCK = "stuck"


class OutcomeRow(TypedDict, total=False):
    """A line of outcomes.jsonl / val.jsonl read back (`Trajectory.outcome` writes one); a row
    from an older or hand-edited file may lack any key."""

    id: str
    score: float | None
    success: bool
    steps: int
    tokens: float
    cost: float
    prediction: str | None
    expected: str | None
    error: str | None
    failure: str | None
    scores: list[float | None]
    loads: dict[str, int]
    """The skills a CLI agent loaded: `{name: repeats that loaded it}` (absent: none loaded)."""


class FileEdit(BaseModel):
    """A file the agent changed by an edit written in its reply (`agent.edit_format`)."""

    path: str
    """Relative to the working directory."""
    diff: str
    """The unified diff of the change."""


class Provenance(BaseModel):
    """Where an ingested trajectory came from: a real agent session, not a benchmark task."""

    format: str
    file: str
    outcome: Outcome


class ExpectationResult(BaseModel):
    """A judge's verdict on one expectation of a task, with the evidence it rests on."""

    expectation: str
    passed: bool
    evidence: str = ""


class Score(BaseModel):
    """What a workdir suite's scorer says about one task's work (`protocols.Scorer`)."""

    value: float = Field(ge=0.0, le=1.0)
    feedback: str = ""
    """Written feedback: failing tests' names and messages, a judge's reasons. Reaches the roles
    on train tasks only."""
    expectations: list[ExpectationResult] = Field(default_factory=list)


class Trajectory(BaseModel):
    task_id: str
    split: str
    kind: BenchmarkKind | Literal["session"]
    """The kind of the suite whose task agent played it, or `session`."""
    question: str
    messages: list[dict[str, Any]] = Field(default_factory=list)
    steps: list[TraceStep] = Field(default_factory=list)
    prediction: str | None = None
    expected: str | None = None
    score: float = 0.0
    won: bool | None = None
    lost: bool | None = None
    usage: Usage = Usage()
    skills: list[str] = Field(default_factory=list)
    """The skills the agent was shown (in its prompt, or as folders for a CLI)."""
    skills_loaded: list[str] = Field(default_factory=list)
    """The skills a CLI agent loaded (through its skill tool, or by reading their SKILL.md)."""
    edits: list[FileEdit] = Field(default_factory=list)
    """The file edits the workdir agent applied from its replies' text, in order."""
    error: str | None = None
    failure: FailureKind | None = None
    """Set when `error` is an infrastructure failure or a timeout (see `FailureKind`)."""
    retries: int = 0
    """Tries after the first that this outcome took, each after an infrastructure failure
    (`infra.retries`); an `infra` outcome used them all."""
    provenance: Provenance | None = None
    feedback: str | None = None
    """The scorer's written feedback on a workdir task (`Score.feedback`); rendered for the roles
    on train traces only."""

    @property
    def success(self) -> bool:
        return self.score >= 1.0 and not self.infra

    @property
    def infra(self) -> bool:
        """The machinery around the task failed: the task has no score."""
        return self.failure is FailureKind.INFRA

    def outcome(self) -> dict[str, Any]:
        """The line of outcomes.jsonl / val.jsonl for this task (an infra task's score is null)."""
        return {
            "id": self.task_id,
            "score": None if self.infra else round(self.score, 6),
            "success": self.success,
            "steps": self.step_count(),
            "tokens": self.usage.tokens,
            "cost": round(self.usage.cost_usd, 8),
            "prediction": self.prediction,
            "expected": self.expected,
            "error": self.error,
            "failure": self.failure.value if self.failure else None,
            **({"loads": dict.fromkeys(self.skills_loaded, 1)} if self.skills_loaded else {}),
        }

    def step_count(self) -> int:
        """Actions in an episode, calls in a tool-use conversation, else 1 for a QA answer."""
        if self.steps:
            return len(self.steps)
        if self.kind == BenchmarkKind.TOOL_USE:
            return sum(len(message.get("tool_calls") or []) for message in self.messages)
        return 1 if self.prediction is not None else 0

    def render(self, max_chars: int | None = None) -> str:
        """A readable rendering for the maintainer and proposer, cut to `max_chars`."""
        head = [
            f"# Trace {self.task_id} ({self.split})",
            (f"score: none ({FailureKind.INFRA.value} failure)" if self.infra else f"score: {self.score:.3f}")
            + f" | success: {self.success}"
            + (f" | won: {self.won} | lost: {self.lost}" if self.won is not None else ""),
            f"task: {self.question}",
        ]
        if self.provenance:
            source = self.provenance
            head.append(f"ingested {source.format} session {source.file}; outcome: {source.outcome.value}")
        if self.skills:
            head.append(f"skills in prompt: {', '.join(self.skills)}")
        if self.skills_loaded:
            head.append(f"skills loaded: {', '.join(self.skills_loaded)}")
        if self.error:
            head.append(f"error: {self.error}")
        if self.edits:
            head.append(f"files edited from the replies' text: {', '.join(dict.fromkeys(e.path for e in self.edits))}")
        lines = head + [""]
        if self.steps:
            for number, step in enumerate(self.steps, 1):
                lines.append(f"[{number}] > {step.action}")
                if step.note:
                    lines.append(f"    ({step.note})")
                lines.append(f"    {step.observation.strip()}".replace("\n", "\n    "))
                lines.append(f"    score so far: {step.score:g}")
        else:
            for message in self.messages:
                if message.get("role") == "system":
                    continue
                lines.append(f"## {message.get('role')}\n{message.get('content') or ''}")
                lines += [_call_line(call) for call in message.get("tool_calls") or []]
            if self.kind != BenchmarkKind.TOOL_USE:
                lines.append(f"prediction: {self.prediction!r}")
        lines.append(f"expected: {self.expected!r}" if self.expected is not None else "")
        if self.feedback and self.split in KEPT_WHOLE:
            lines.append(f"## scorer feedback\n{self.feedback.strip()}")
        text = "\n".join(lines).rstrip() + "\n"
        return cut(text, max_chars)

    def to_json(self) -> str:
        """The trace file's text, written by pydantic's own serializer."""
        return self.model_dump_json(indent=1) + "\n"


def _call_line(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    return f"-> {function.get('name')}({function.get('arguments') or ''})"


def cut(text: str, max_chars: int | None) -> str:
    """Cut long text, keeping its head and tail (the end of an episode is where it failed)."""
    if max_chars is None or len(text) <= max_chars:
        return text
    marker = f"\n[... {len(text) - max_chars} characters cut ...]\n"
    keep = max(max_chars - len(marker), 0)
    head = keep // 2
    return text[:head] + marker + text[len(text) - (keep - head) :]


def outcomes_jsonl(trajectories: list[Trajectory]) -> str:
    return "".join(json.dumps(t.outcome(), ensure_ascii=False) + "\n" for t in trajectories)


def scored(trajectories: list[Trajectory]) -> list[Trajectory]:
    """The trajectories that have a score: all but the infrastructure failures."""
    return [t for t in trajectories if not t.infra]


def mean_score(trajectories: list[Trajectory]) -> float:
    """The mean over the scored tasks (infrastructure failures are left out, never counted as 0)."""
    kept = scored(trajectories)
    return sum(t.score for t in kept) / len(kept) if kept else 0.0


def infra_trajectory(task_id: str, split: str, kind: BenchmarkKind, question: str, reason: str) -> Trajectory:
    """What is recorded for a task whose machinery failed for good: no score, the reason."""
    return Trajectory(
        task_id=task_id, split=split, kind=kind, question=question, error=reason, failure=FailureKind.INFRA
    )
