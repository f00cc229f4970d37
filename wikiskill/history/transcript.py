"""One task's trajectory as the agent lived it, read back from git: `wikiskill show ROUND --task ID`.

A round's train trajectories are committed whole under raw/rNNN/train/; its validation keeps
one outcome row per task (raw/rNNN/val.jsonl), so a val task shows its answer, score and error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from ..core.errors import WikiskillError
from ..store.rounds import round_label
from ..store.traces import Trajectory
from ..store.workspace import MAIN, Workspace
from .roundstory import round_story


@dataclass(frozen=True)
class TaskView:
    round: int
    task_id: str
    trajectory: Trajectory | None
    """The whole trajectory (a train task), or None where only the outcome row is kept (val)."""
    outcome: Mapping[str, object]
    """The task's outcome row: `score`, `prediction`, `expected`, `error`, ..."""


def task_view(ws: Workspace, number: int, task_id: str) -> TaskView:
    story = round_story(ws, number)
    text = ws.read_file(MAIN, f"raw/{round_label(number)}/train/{task_id}.json")
    if text is not None:
        trajectory = Trajectory.model_validate_json(text)
        return TaskView(number, task_id, trajectory, trajectory.outcome())
    row = next((row for row in story.validation if str(row.get("id")) == task_id), None)
    if row is None:
        raise WikiskillError(
            f"round {number} ran no task {task_id!r}: `wikiskill show {number}` lists its validation's tasks, "
            f"raw/{round_label(number)}/train/ its train tasks"
        )
    return TaskView(number, task_id, None, row)


def transcript_lines(view: TaskView) -> list[str]:
    """The task as lived: its prompt (the skills it carried), each message, tool call and result,
    the answer (a game: its actions and points), the score and the scorer's feedback."""
    outcome, trajectory = view.outcome, view.trajectory
    score = "none (infrastructure failure)" if outcome.get("score") is None else f"{outcome['score']:.3f}"
    lines = [f"round {view.round}, task {view.task_id}: score {score}"]
    if trajectory is None:
        lines.append("(a val task: its outcome is kept, not its messages)")
        if outcome.get("prediction") is None and outcome.get("expected") is None and outcome.get("steps"):
            lines.append(f"played {outcome['steps']} actions (a game: its score is the points it made)")
        else:
            lines += [f"answer: {outcome.get('prediction')!r}", f"expected: {outcome.get('expected')!r}"]
        return lines + ([f"error: {outcome['error']}"] if outcome.get("error") else [])
    lines += [
        f"split: {trajectory.split}; skills in its prompt: {', '.join(trajectory.skills) or 'none'}"
        + (f"; loaded: {', '.join(trajectory.skills_loaded)}" if trajectory.skills_loaded else ""),
        f"question: {trajectory.question}",
    ]
    for message in trajectory.messages:
        lines.append(f"--- {message.get('role')}" + (f" ({message['name']})" if message.get("name") else ""))
        if message.get("content"):
            lines.append(_content(message["content"]))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            lines.append(f"-> call {function.get('name')}({function.get('arguments') or ''})")
    for number, step in enumerate(trajectory.steps, 1):
        lines += [f"--- step {number}: > {step.action}", step.observation.strip(), f"score so far: {step.score:g}"]
    if trajectory.steps and trajectory.prediction is None and trajectory.expected is None:
        won = "won" if trajectory.success else "not won"
        lines.append(f"--- game over after {len(trajectory.steps)} actions: {won}, score {trajectory.score:g}")
    else:
        lines += [f"--- answer: {trajectory.prediction!r}", f"expected: {trajectory.expected!r}"]
    if trajectory.error:
        lines.append(f"error: {trajectory.error}")
    if trajectory.feedback:
        lines += ["--- scorer feedback", trajectory.feedback.strip()]
    return lines


def _content(content: object) -> str:
    if isinstance(content, str):
        return content.rstrip()
    return json.dumps(content, ensure_ascii=False, indent=1)
