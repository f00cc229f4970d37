"""How often each skill reached the task agent's prompt, and whether it helped, per task.

Read from main's history, oldest first:
- a rollout's trajectories name the skills their prompt carried (all of them in `full` mode, the
  retrieved ones in `retrieve`): that is the skill's reach; a CLI agent's also name the skills it
  loaded;
- an accepted merge compares the candidate's per-task validation outcomes (the evaluation its
  trailers name) with the incumbent's:
  a task that scored higher with the change counts as helped, lower as hurt;
- the first rollout after a merge compares each train task with the last rollout before it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..store.evaluations import evaluation_at, read_scores
from ..store.rounds import round_label
from ..store.trailers import Action, Step
from ..store.workspace import MAIN, Workspace

CHANGES = (Action.CREATE, Action.PATCH, Action.DESCRIBE)


@dataclass
class SkillUsage:
    name: str
    prompts: int = 0
    """Train tasks whose prompt carried the skill (for a CLI agent: whose folder held it)."""
    loads: int = 0
    """Train tasks whose CLI agent loaded the skill (its skill tool, or a read of its SKILL.md)."""
    helped: int = 0
    """Tasks that scored higher with the change to the skill (validation at its merge, then the
    next rollout)."""
    hurt: int = 0
    """Tasks that scored lower with it."""


def effect(after: dict[str, float], before: dict[str, float]) -> tuple[int, int]:
    """(helped, hurt): tasks in both that scored higher, and lower, after."""
    common = after.keys() & before.keys()
    return sum(after[t] > before[t] for t in common), sum(after[t] < before[t] for t in common)


def skill_usage(ws: Workspace, ref: str = MAIN) -> dict[str, SkillUsage]:
    usage: dict[str, SkillUsage] = {}
    incumbent: dict[str, float] = {}
    last_train: dict[str, float] = {}
    pending: set[str] = set()

    def entry(name: str) -> SkillUsage:
        return usage.setdefault(name, SkillUsage(name))

    for commit in reversed(ws.log(ref)):
        meta = commit.meta
        evaluation = evaluation_at(ws, commit) if meta.step in (Step.BASELINE, Step.INCUMBENT, Step.GATE) else None
        if evaluation and meta.step == Step.GATE and meta.skill and meta.action in CHANGES:
            helped, hurt = effect(evaluation.scores, incumbent)
            entry(meta.skill).helped += helped
            entry(meta.skill).hurt += hurt
            pending.add(meta.skill)
            incumbent = evaluation.scores
        elif evaluation:
            incumbent = evaluation.scores
        elif meta.step == Step.ROLLOUT:
            folder = f"raw/{round_label(meta.round or 0)}/train"
            train = read_scores(ws.read_file(commit.sha, f"{folder}/outcomes.jsonl") or "")
            for file, text in ws.read_files(commit.sha, folder).items():
                shown, loaded = _trace_skills(text) if file.endswith(".json") else ([], [])
                for skill in shown:
                    entry(skill).prompts += 1
                for skill in loaded:
                    entry(skill).loads += 1
            for skill in pending:
                helped, hurt = effect(train, last_train)
                entry(skill).helped += helped
                entry(skill).hurt += hurt
            pending, last_train = set(), train
    return usage


def _trace_skills(text: str) -> tuple[list[str], list[str]]:
    """The skills a trace's agent was shown, and those it loaded."""
    try:
        data = json.loads(text)
    except ValueError:
        return [], []
    if not isinstance(data, dict):
        return [], []
    return _names(data.get("skills")), _names(data.get("skills_loaded"))


def _names(value: object) -> list[str]:
    return [str(name) for name in value] if isinstance(value, list) else []
