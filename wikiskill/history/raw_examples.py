"""The `raw` arm of `wikiskill uplift`: the trajectories of solved train tasks offered to the
agent as worked examples, in place of skills (SkillEvolBench found raw trajectories often beat
distilled skills). They reach the agent the way skills do, as one skill whose body is the
examples, so every agent and skills mode takes them unchanged."""

from __future__ import annotations

from ..core.errors import WikiskillError
from ..store.rounds import completed_rounds, round_label
from ..store.traces import Trajectory
from ..store.workspace import MAIN, Workspace

MAX_EXAMPLES = 8
EXAMPLE_CHARS = 800
"""Each example is cut to this many characters."""
NAME = "solved-examples"


def latest_train(ws: Workspace) -> list[Trajectory]:
    """The train trajectories of main's latest rollout."""
    for number in range(completed_rounds(ws) + 1, 0, -1):
        files = ws.read_files(MAIN, f"raw/{round_label(number)}/train")
        if files:
            return [
                Trajectory.model_validate_json(text) for path, text in sorted(files.items()) if path.endswith(".json")
            ]
    return []


def example(trajectory: Trajectory) -> str:
    if trajectory.steps:
        shown = "Actions: " + "; ".join(step.action for step in trajectory.steps)
    else:
        shown = f"Answer: {trajectory.prediction or ''}"
    return f"### {trajectory.task_id}\nTask: {trajectory.question}\n{shown}"[:EXAMPLE_CHARS]


def raw_skill(ws: Workspace) -> dict[str, str]:
    """`{path under skills/: text}` of the one skill holding the solved train tasks as examples."""
    solved = [trajectory for trajectory in latest_train(ws) if trajectory.success][:MAX_EXAMPLES]
    if not solved:
        raise WikiskillError("the raw arm needs solved train tasks in a rollout on main: run `wikiskill evolve` first")
    body = "\n\n".join(example(trajectory) for trajectory in solved)
    text = (
        f"---\nname: {NAME}\ndescription: Worked examples of solved tasks; use when a task resembles one of them.\n"
        "---\n\n## When to Apply\nA task resembles one of the examples.\n\n## When NOT to Apply\n"
        f"No example resembles the task.\n\n## Instructions\nDo as the solved examples did.\n\n{body}\n"
    )
    return {f"{NAME}/SKILL.md": text}
