"""wikiskill's trajectories written as ATIF v1.8 (`wikiskill export-trajectories`), each validated
by the `atif` package's models before any file is written.

Chat messages become steps (system, user, an agent step per assistant message with its tool calls,
and each tool result as an observation result of the agent step before it); an episode's actions
become agent steps, each with its observation. What ATIF has no field for (the split, the score,
the answer expected, the skills shown and loaded, an episode's running score) goes under the
root's and the steps' `extra.wikiskill`, which `atif_in` reads back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import atif
from pydantic import ValidationError

from .. import __version__
from ..benchmarks.base import BenchmarkKind
from ..core.errors import WikiskillError, first_problem
from ..store.reads import WorkspaceReads
from ..store.rounds import round_label
from ..store.traces import Trajectory, TrajectorySplit
from ..store.workspace import MAIN
from .atif_in import EXTRA_KEY, WRITTEN_VERSION, StepExtra, TrajectoryExtra

AGENT_NAME = "wikiskill"


def to_atif(trajectory: Trajectory) -> atif.Trajectory:
    """The trajectory as an ATIF v1.8 document, validated by the `atif` models."""
    steps = _episode_steps(trajectory) if trajectory.steps else _message_steps(trajectory)
    usage = trajectory.usage
    own = TrajectoryExtra(
        task_id=trajectory.task_id,
        split=trajectory.split,
        kind=trajectory.kind if isinstance(trajectory.kind, BenchmarkKind) else None,
        score=None if trajectory.infra else trajectory.score,
        prediction=trajectory.prediction,
        expected=trajectory.expected,
        feedback=trajectory.feedback,
        error=trajectory.error,
        failure=trajectory.failure,
        won=trajectory.won,
        lost=trajectory.lost,
        skills=trajectory.skills,
        skills_loaded=trajectory.skills_loaded,
        edits=trajectory.edits,
    )
    source = trajectory.provenance
    document = {
        "schema_version": WRITTEN_VERSION,
        "session_id": trajectory.task_id,
        "trajectory_id": trajectory.task_id,
        "agent": {"name": AGENT_NAME, "version": __version__},
        "steps": [{"step_id": number, **step} for number, step in enumerate(steps, 1)],
        "notes": f"ingested {source.format} session {source.file}" if source else None,
        "final_metrics": {
            "total_prompt_tokens": usage.prompt_tokens,
            "total_completion_tokens": usage.completion_tokens,
            "total_cached_tokens": usage.cached_tokens,
            "total_cost_usd": usage.cost_usd,
            "total_steps": len(steps),
        },
        "extra": {EXTRA_KEY: own.model_dump(mode="json", exclude_none=True, exclude_defaults=True)},
    }
    try:
        return atif.Trajectory.model_validate(document)
    except ValidationError as exc:
        raise WikiskillError(f"trajectory {trajectory.task_id} is no valid ATIF: {first_problem(exc)}") from None


def _episode_steps(trajectory: Trajectory) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [{"source": "user", "message": trajectory.question}]
    for action in trajectory.steps:
        own = StepExtra(score=action.score, note=action.note)
        steps.append(
            {
                "source": "agent",
                "message": action.action,
                "observation": {"results": [{"content": action.observation}]},
                "extra": {EXTRA_KEY: own.model_dump(exclude_none=True)},
            }
        )
    return steps


def _message_steps(trajectory: Trajectory) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    if not any(message.get("role") == "user" for message in trajectory.messages):
        steps.append({"source": "user", "message": trajectory.question})
    for message in trajectory.messages:
        role, text = message.get("role"), _text(message.get("content"))
        if role == "tool":
            _add_result(steps, str(message.get("tool_call_id") or ""), text)
        elif role == "assistant":
            calls = [_tool_call(call, number) for number, call in enumerate(message.get("tool_calls") or [], 1)]
            steps.append({"source": "agent", "message": text, **({"tool_calls": calls} if calls else {})})
        else:
            steps.append({"source": "user" if role == "user" else "system", "message": text})
    if trajectory.prediction is not None and not any(step["source"] == "agent" for step in steps):
        steps.append({"source": "agent", "message": trajectory.prediction})
    return steps


def _add_result(steps: list[dict[str, Any]], call_id: str, text: str) -> None:
    """A tool result as an observation result of the agent step before it (tied to its call when
    that step made it), or of a system step of its own when no agent step comes just before."""
    if not steps or steps[-1]["source"] != "agent":
        steps.append({"source": "system", "message": ""})
    step = steps[-1]
    calls = {call["tool_call_id"] for call in step.get("tool_calls", [])}
    result = {"source_call_id": call_id if call_id in calls else None, "content": text}
    step.setdefault("observation", {"results": []})["results"].append(result)


def _tool_call(call: dict[str, Any], number: int) -> dict[str, Any]:
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else raw or {}
    except json.JSONDecodeError:
        arguments = {"input": raw}
    return {
        "tool_call_id": str(call.get("id") or f"call_{number}"),
        "function_name": str(function.get("name") or ""),
        "arguments": arguments if isinstance(arguments, dict) else {"input": arguments},
    }


def _text(content: object) -> str:
    """A message's content as text: a string, or its parts' text joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return str(content)


def round_documents(ws: WorkspaceReads, round_number: int, splits: list[TrajectorySplit]) -> dict[str, atif.Trajectory]:
    """A round's kept trajectories of `splits` on main as ATIF documents, by their path under the
    output folder (`<split>/<task id>.json`)."""
    label = round_label(round_number)
    documents = {}
    for split in splits:
        for path, text in sorted(ws.read_files(MAIN, f"raw/{label}/{split.value}").items()):
            if path.endswith(".json"):
                trajectory = Trajectory.model_validate_json(text)
                documents[f"{split.value}/{trajectory.task_id}.json"] = to_atif(trajectory)
    if not documents:
        kept = " or ".join(split.value for split in splits)
        raise WikiskillError(f"round {round_number} has no {kept} trajectory on main (raw/{label}/): nothing to export")
    return documents


def export_trajectories(ws: WorkspaceReads, round_number: int, splits: list[TrajectorySplit], out: Path) -> list[Path]:
    """Write a round's trajectories as ATIF files under `out/<split>/`; every one is converted and
    validated before the first is written."""
    documents = round_documents(ws, round_number, splits)
    written = []
    for name, document in documents.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document.to_json_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
