"""The judge: an LLM grades a workdir task's final answer and changed files against the task's
rubric or each of its expectations (`scorer: judge`; the `judge` role of wikiskill.yaml).

Its reply is a `JudgeReply`, whose JSON schema is what the prompt shows; a reply that does not
parse gets one retry with the reason, then the judge has failed: an infrastructure failure of
that task alone (`run/workdir_tasks.py`). `judge.samples` verdicts are
asked and their values averaged; the feedback and per-expectation evidence are those of the
verdict nearest that mean.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ..benchmarks import Task
from ..core.prompts import render
from ..llm.chat import ChatModel, Message
from ..llm.jsontext import extract_json
from ..store.traces import ExpectationResult, Score, Trajectory, cut

CHANGES_CHARS = 20_000
"""The most characters of changed files the judge is shown."""
SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".git"})
TEMPLATES = ("judge_system", "judge_user", "judge_retry")
"""The judge's templates in prompts/ (they enter the evaluation fingerprint)."""


class ExpectationVerdict(BaseModel):
    """The verdict on one expectation."""

    passed: bool
    """Whether the work clearly meets the expectation."""
    evidence: str
    """A short quote from the answer or a changed file that shows it, or what is missing."""


class JudgeReply(BaseModel):
    """The judge's reply: one verdict per expectation, or a rubric score."""

    expectations: list[ExpectationVerdict] = Field(default_factory=list)
    """One verdict per expectation, in the order given (empty under a rubric)."""
    score: float | None = Field(None, ge=0.0, le=1.0)
    """Under a rubric: how well the work meets it, from 0 to 1 (empty under expectations)."""
    feedback: str = ""
    """A few lines on what is wrong or missing."""


def reply_schema() -> str:
    return json.dumps(JudgeReply.model_json_schema(), indent=1)


class Judge:
    """Follows `protocols.Scorer`: `samples` verdicts per task from `model`, averaged."""

    def __init__(self, model: ChatModel, samples: int = 1, feedback_chars: int = 2000):
        self.model = model
        self.samples = samples
        self.feedback_chars = feedback_chars

    def score(self, task: Task, trajectory: Trajectory, workdir: Path) -> Score:
        expectations: list[str] = list(task.metadata.get("expectations") or [])
        messages = [
            {"role": "system", "content": render("judge_system", expectations=expectations, schema=reply_schema())},
            {
                "role": "user",
                "content": render(
                    "judge_user",
                    task=task.question,
                    expectations=expectations,
                    rubric=task.metadata.get("rubric", ""),
                    answer=trajectory.prediction,
                    changes=changed_files(task.files, workdir),
                ),
            },
        ]
        verdicts = [self._verdict(messages, expectations) for _ in range(self.samples)]
        mean = sum(value for value, _ in verdicts) / len(verdicts)
        value, reply = min(verdicts, key=lambda verdict: abs(verdict[0] - mean))
        results = [
            ExpectationResult(expectation=text, passed=verdict.passed, evidence=verdict.evidence)
            for text, verdict in zip(expectations, reply.expectations, strict=True)
        ]
        lines = [
            f"FAILED expectation: {result.expectation} ({result.evidence})" for result in results if not result.passed
        ]
        if reply.feedback.strip():
            lines.append(reply.feedback.strip())
        return Score(value=mean, feedback=cut("\n".join(lines), self.feedback_chars), expectations=results)

    def _verdict(self, messages: list[Message], expectations: list[str]) -> tuple[float, JudgeReply]:
        asked = list(messages)
        for attempt in (1, 2):
            reply = self.model.complete(asked, response_model=JudgeReply)
            try:
                parsed = parse_reply(reply.content, len(expectations))
            except ValueError as exc:
                if attempt == 2:
                    raise ValueError(f"the judge's reply cannot be used: {exc}") from None
                asked += [reply.message(), {"role": "user", "content": render("judge_retry", reason=str(exc))}]
                continue
            if expectations:
                return sum(v.passed for v in parsed.expectations) / len(expectations), parsed
            return float(parsed.score or 0.0), parsed
        raise AssertionError("unreachable")


def parse_reply(text: str | None, expected: int) -> JudgeReply:
    """The reply as a `JudgeReply` holding what the task asks for; ValueError says what is wrong."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ValueError("the reply must be one JSON object")
    try:
        reply = JudgeReply.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors()[:5])
        raise ValueError(f"the JSON object does not match the schema: {problems}") from exc
    if expected and len(reply.expectations) != expected:
        raise ValueError(f"give exactly {expected} expectation verdicts, in order (got {len(reply.expectations)})")
    if not expected and reply.score is None:
        raise ValueError("give the rubric's `score`, from 0 to 1")
    return reply


def changed_files(original: Path | None, workdir: Path, budget: int = CHANGES_CHARS) -> str:
    """A unified diff of `workdir` against the task's files it started from (new files whole)."""
    before, after = _files(original), _files(workdir)
    parts = []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if new is None:
            parts.append(f"--- {name} (deleted)")
            continue
        old_text, new_text = _text(old or b""), _text(new)
        if old_text is None or new_text is None:
            parts.append(f"--- {name} (binary, changed)")
            continue
        parts.append(
            "".join(
                difflib.unified_diff(
                    old_text.splitlines(keepends=True),
                    new_text.splitlines(keepends=True),
                    f"a/{name}" if old is not None else "/dev/null",
                    f"b/{name}",
                )
            )
        )
    return cut("\n".join(parts), budget)


def _files(folder: Path | None) -> dict[str, bytes]:
    if folder is None or not folder.is_dir():
        return {}
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part in SKIPPED for part in relative.parts) or not path.is_file() or path.is_symlink():
            continue
        found[relative.as_posix()] = path.read_bytes()
    return found


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
