"""How often each skill reached the task agent's prompt, and whether it helped, per task.

Read from main's history, oldest first:
- a rollout's trajectories name the skills their prompt carried (all of them in `full` mode, the
  retrieved ones in `retrieve`): that is the skill's reach;
- an accepted merge compares the candidate's per-task validation outcomes with the incumbent's:
  a task that scored higher with the change counts as helped, lower as hurt;
- the first rollout after a merge compares each train task with the last rollout before it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .history import round_label
from .workspace import MAIN, Commit, Workspace

CHANGES = ("create", "patch")


@dataclass
class SkillUsage:
    name: str
    prompts: int = 0
    """Train tasks whose prompt carried the skill."""
    helped: int = 0
    """Tasks that scored higher with the change to the skill (validation at its merge, then the
    next rollout)."""
    hurt: int = 0
    """Tasks that scored lower with it."""


def outcomes(text: str | None) -> dict[str, float]:
    """`{task id: score}` of an outcomes jsonl file; lines that do not parse are left out."""
    scores = {}
    for line in (text or "").splitlines():
        try:
            row = json.loads(line)
            scores[str(row["id"])] = float(row["score"])
        except (ValueError, KeyError, TypeError):
            continue
    return scores


def effect(after: dict[str, float], before: dict[str, float]) -> tuple[int, int]:
    """(helped, hurt): tasks in both that scored higher, and lower, after."""
    common = after.keys() & before.keys()
    return sum(after[t] > before[t] for t in common), sum(after[t] < before[t] for t in common)


def _validation_path(commit: Commit) -> str | None:
    """The per-task validation outcomes a baseline or accepted gate commit scored."""
    number = int(commit.trailer("Round") or 0)
    if commit.trailer("Step") == "baseline":
        return "raw/baseline/val.jsonl" if number == 0 else f"raw/{round_label(number)}/incumbent-val.jsonl"
    if commit.trailer("Step") == "gate" and commit.trailer("Decision") == "accepted":
        return f"raw/{round_label(number)}/val.jsonl"
    return None


def incumbent_outcomes(ws: Workspace, ref: str = MAIN) -> dict[str, float]:
    """The per-task validation outcomes of the skills at `ref` (empty when never validated)."""
    for commit in ws.log(ref):
        path = _validation_path(commit)
        if path:
            return outcomes(ws.read_file(commit.sha, path))
    return {}


def skill_usage(ws: Workspace, ref: str = MAIN) -> dict[str, SkillUsage]:
    usage: dict[str, SkillUsage] = {}
    incumbent: dict[str, float] = {}
    last_train: dict[str, float] = {}
    pending: set[str] = set()

    def entry(name: str) -> SkillUsage:
        return usage.setdefault(name, SkillUsage(name))

    for commit in reversed(ws.log(ref)):
        step, name = commit.trailer("Step"), commit.trailer("Skill")
        path = _validation_path(commit)
        if path and step == "gate" and name and commit.trailer("Action") in CHANGES:
            scores = outcomes(ws.read_file(commit.sha, path))
            helped, hurt = effect(scores, incumbent)
            entry(name).helped += helped
            entry(name).hurt += hurt
            pending.add(name)
            incumbent = scores
        elif path:
            incumbent = outcomes(ws.read_file(commit.sha, path))
        elif step == "rollout":
            folder = f"raw/{round_label(int(commit.trailer('Round') or 0))}/train"
            train = outcomes(ws.read_file(commit.sha, f"{folder}/outcomes.jsonl"))
            for file, text in ws.read_files(commit.sha, folder).items():
                for skill in _prompt_skills(text) if file.endswith(".json") else []:
                    entry(skill).prompts += 1
            for skill in pending:
                helped, hurt = effect(train, last_train)
                entry(skill).helped += helped
                entry(skill).hurt += hurt
            pending, last_train = set(), train
    return usage


def _prompt_skills(text: str) -> list[str]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    skills = data.get("skills") if isinstance(data, dict) else None
    return [str(name) for name in skills] if isinstance(skills, list) else []
