"""ATIF (Harbor's Agent Trajectory Interchange Format, RFC 0001) read as wikiskill trajectories.

A file is validated by the `atif` package's models of v1.8. v1.4 to v1.7 are subsets of v1.8
(v1.5 added `is_copied_context`, v1.6 multimodal content parts, v1.7 `trajectory_id`, embedded
`subagent_trajectories` and `llm_call_count`, v1.8 audio parts), with one rule that changed: before
v1.7 a subagent reference was resolved by its `session_id`, which v1.7 made informational, so a
reference must now carry `trajectory_id` or `trajectory_path`. `upgrade` gives an older reference
its `session_id` as `trajectory_id`; nothing else of an older file changes.

Steps become chat messages in the shape every ingested session has (system, user, assistant with
its tool calls, a tool message per observation result); what ATIF has no field for and wikiskill
wrote itself (`atif_out`) is read back from the root's and the steps' `extra.wikiskill`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import atif
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..benchmarks.base import BenchmarkKind
from ..core.errors import TranscriptError, first_problem
from ..core.redact import Scrubber
from ..llm.chat import Message
from ..store.traces import SESSION, FailureKind, FileEdit, Outcome, Provenance, TraceStep, Trajectory, cut
from .sessions import INGESTED_SPLIT, QUESTION_CHARS, json_document, session_id

ATIF_FORMAT = "atif"
WRITTEN_VERSION = "ATIF-v1.8"
READ_VERSIONS = ("ATIF-v1.4", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7", WRITTEN_VERSION)
REFS_RESOLVED_BY_ID = ("ATIF-v1.7", WRITTEN_VERSION)
"""The versions whose subagent references need no upgrade."""
EXTRA_KEY = "wikiskill"
M = TypeVar("M", bound=BaseModel)


class TrajectoryExtra(BaseModel):
    """What a wikiskill trajectory holds that ATIF has no field for: the root's `extra.wikiskill`."""

    model_config = ConfigDict(extra="ignore")

    task_id: str | None = None
    split: str | None = None
    kind: BenchmarkKind | None = None
    score: float | None = None
    prediction: str | None = None
    expected: str | None = None
    feedback: str | None = None
    error: str | None = None
    failure: FailureKind | None = None
    """Written for readers; an ingested trajectory is never an infrastructure failure."""
    won: bool | None = None
    lost: bool | None = None
    skills: list[str] = Field(default_factory=list)
    skills_loaded: list[str] = Field(default_factory=list)
    edits: list[FileEdit] = Field(default_factory=list)


class StepExtra(BaseModel):
    """An episode's action as wikiskill scored it: an agent step's `extra.wikiskill`."""

    model_config = ConfigDict(extra="ignore")

    score: float = 0.0
    """The episode's score after the action."""
    note: str | None = None


def parse_atif(text: str, name: str) -> atif.Trajectory:
    """The ATIF document in `text`, upgraded to v1.8 and validated; TranscriptError naming `name`."""
    data = json_document(text, name)
    if not isinstance(data, dict):
        raise TranscriptError(f"{name}: an ATIF trajectory is a JSON object")
    version = data.get("schema_version")
    if version not in READ_VERSIONS:
        raise TranscriptError(
            f"{name}: schema_version {version!r} is not one wikiskill reads ({', '.join(READ_VERSIONS)})"
        )
    try:
        return atif.Trajectory.model_validate(upgrade(data))
    except ValidationError as exc:
        raise TranscriptError(f"{name}: not valid {version}: {first_problem(exc, 'the document')}") from None


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A v1.4 to v1.6 document as v1.8 reads it: each subagent reference that names its trajectory
    by `session_id` alone names it by `trajectory_id` too. Newer documents are returned as they are."""
    if data.get("schema_version") in REFS_RESOLVED_BY_ID:
        return data
    steps = data.get("steps")
    for step in steps if isinstance(steps, list) else []:
        observation = step.get("observation") if isinstance(step, dict) else None
        results = observation.get("results") if isinstance(observation, dict) else None
        for result in results if isinstance(results, list) else []:
            refs = result.get("subagent_trajectory_ref") if isinstance(result, dict) else None
            for ref in refs if isinstance(refs, list) else []:
                if isinstance(ref, dict) and ref.get("trajectory_path") is None and ref.get("trajectory_id") is None:
                    ref["trajectory_id"] = ref.get("session_id")
    return data


def own_extra(extra: dict[str, Any] | None) -> dict[str, Any]:
    found = (extra or {}).get(EXTRA_KEY)
    return found if isinstance(found, dict) else {}


def _own(model: type[M], extra: dict[str, Any], name: str) -> M:
    """wikiskill's own fields of an `extra`; TranscriptError naming `name` when they do not read."""
    try:
        return model.model_validate(extra)
    except ValidationError as exc:
        raise TranscriptError(f"{name}: extra.{EXTRA_KEY}.{first_problem(exc)}") from None


def content_text(content: str | list[atif.ContentPart] | None) -> str:
    """Text of a message or result: a string, or its text parts joined (an image or audio part
    stands as `[image]` or `[audio]`)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(
        part.text if part.type == "text" and part.text is not None else f"[{part.type}]" for part in content
    )


def _result_text(result: atif.ObservationResult) -> str:
    text = content_text(result.content)
    refs = [ref.trajectory_id or ref.trajectory_path or "" for ref in result.subagent_trajectory_ref or []]
    return "\n".join(filter(None, [text, *(f"(subagent trajectory {ref})" for ref in refs)]))


def atif_messages(doc: atif.Trajectory) -> list[Message]:
    """The document's steps as chat messages."""
    messages: list[Message] = []
    for step in doc.steps:
        text = content_text(step.message)
        if step.source == "agent":
            if step.reasoning_content:
                text = "\n".join(filter(None, [f"(thinking) {step.reasoning_content}", text]))
            reply: Message = {"role": "assistant", "content": text}
            if step.tool_calls:
                reply["tool_calls"] = [
                    {
                        "id": call.tool_call_id,
                        "type": "function",
                        "function": {
                            "name": call.function_name,
                            "arguments": json.dumps(call.arguments, ensure_ascii=False),
                        },
                    }
                    for call in step.tool_calls
                ]
            messages.append(reply)
        elif text or step.observation is None:
            messages.append({"role": step.source, "content": text})
        for result in step.observation.results if step.observation else []:
            messages.append(
                {"role": "tool", "tool_call_id": result.source_call_id or "", "content": _result_text(result)}
            )
    return messages


def atif_episode(doc: atif.Trajectory, name: str) -> list[TraceStep]:
    """The agent steps as an episode's actions, each with its first result as the observation and
    the score wikiskill wrote on it."""
    episode = []
    for step in doc.steps:
        if step.source != "agent":
            continue
        own = _own(StepExtra, own_extra(step.extra), name)
        results = step.observation.results if step.observation else []
        observation = _result_text(results[0]) if results else ""
        episode.append(
            TraceStep(action=content_text(step.message), observation=observation, score=own.score, note=own.note)
        )
    return episode


def atif_trajectory(
    doc: atif.Trajectory,
    text: str,
    name: str,
    stem: str,
    source: Provenance,
    score: float,
    instruction: str | None = None,
) -> Trajectory:
    """An ingested trajectory of the document, its id `stem` and a digest of its scrubbed `text`,
    its task its first user step, else `instruction`; TranscriptError naming `name` when it has
    neither."""
    written = own_extra(doc.extra)
    own = _own(TrajectoryExtra, written, name)
    users = [content_text(step.message) for step in doc.steps if step.source == "user"]
    question = next((user for user in users if user.strip()), None) or instruction
    if not question:
        raise TranscriptError(f"{name}: no user step and no task instruction: nothing says what the task was")
    episode = own.kind is BenchmarkKind.INTERACTIVE
    messages = [] if episode else atif_messages(doc)
    replies = [content_text(step.message) for step in doc.steps if step.source == "agent"]
    last_reply = next((reply for reply in reversed(replies) if reply.strip()), None)
    prediction = own.prediction if written else last_reply  # wikiskill wrote its answer, or that there was none
    return Trajectory(
        task_id=session_id(stem, text),
        split=INGESTED_SPLIT,
        kind=own.kind or SESSION,
        question=cut(question, QUESTION_CHARS),
        messages=messages,
        steps=atif_episode(doc, name) if episode else [],
        prediction=None if episode else prediction,
        expected=own.expected,
        score=score,
        won=own.won,
        lost=own.lost,
        skills=own.skills,
        skills_loaded=own.skills_loaded,
        edits=own.edits,
        error=own.error,
        feedback=own.feedback,
        provenance=source,
    )


def read_atif(path: Path, outcome: Outcome, scrub: Scrubber) -> Trajectory:
    """One ATIF file as an ingested trajectory of the given outcome, secrets scrubbed from its text
    before it is parsed."""
    text = read_text(path, scrub)
    doc = parse_atif(text, str(path))
    source = Provenance(format=ATIF_FORMAT, file=path.name, outcome=outcome)
    return atif_trajectory(doc, text, str(path), path.stem, source, outcome.score)


def read_text(path: Path, scrub: Scrubber) -> str:
    try:
        return scrub(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
