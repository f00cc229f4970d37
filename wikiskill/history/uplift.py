"""`wikiskill uplift`: do main's skills beat the cheap alternatives, on tasks the gate never saw,
and by how much? Arms scored on the same tasks K times each:

- `none`: no skills; every other arm is compared with it;
- `main`: main's skills;
- `self-written`: skills the proposer's model writes once from the train tasks' instructions
  alone, with no experience (kept on `uplift/self-written` so they can be read);
- `curated:PATH`: a folder of Agent Skills (each `<name>/SKILL.md`, or one SKILL.md);
- `suite`: the skills a Harbor suite ships in its tasks' `environment/skills/`;
- `raw`: the solved train trajectories of main's latest rollout, as worked examples.

Each arm is a commit on `uplift/<arm>` (main's tree with skills/ replaced), evaluated like any
ref, so its results are cached under its fingerprint. `per_skill` leaves each of main's skills
out in turn (`uplift/without-<name>`): its contribution is main's mean minus the mean
without it (positive: the skill helps; see `differences`). An arm that cannot be made (the
self-written arm's model wrote no skills it could read) is reported as not made, with the
reason, and the others are scored. The result is committed as uplift.json on `uplift/results`; the report reads it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..benchmarks import Split
from ..benchmarks.harbor import TASK_DIR_KEY
from ..contracts.runners import skill_loading
from ..core.config import OFFLINE_MODEL, Config
from ..core.errors import SkillsNotWritten, WikiskillError
from ..knowledge.search import tokens
from ..roles.settings import Role
from ..store.trailers import SkillLoading, Step, Trailers, format_message
from ..store.uplift_record import RESULTS_BRANCH, RESULTS_FILE, ArmResult, SkillValue, UpliftResult
from ..store.workspace import MAIN
from .raw_examples import raw_skill
from .triggers import changed_tasks, named_tasks, triggers

if TYPE_CHECKING:
    from ..loop.harness import Harness

BASE_ARMS = ("none", "main", "self-written", "suite", "raw")
DEFAULT_ARMS = ("none", "main", "self-written")


NO_WRITER = (
    "the proposer is offline: it has no model to write skills with "
    "(give roles.proposer a model, or --model, to add this arm)"
)


def default_arms(config: Config) -> tuple[tuple[str, ...], dict[str, str]]:
    """`none`, `main`, and `self-written` where the proposer has a model to write skills with;
    and the default arms left out, each with the reason."""
    if config.role(Role.PROPOSER).model == OFFLINE_MODEL:
        return tuple(arm for arm in DEFAULT_ARMS if arm != "self-written"), {"self-written": NO_WRITER}
    return DEFAULT_ARMS, {}


class ArmNotMade(WikiskillError):
    """An arm whose skills could not be made (the self-written arm's model wrote none): it is
    reported with this reason and the other arms are scored."""


def check_arms(arms: list[str]) -> list[str]:
    """The arms asked for, `none` first; WikiskillError naming an unknown one."""
    for arm in arms:
        if arm not in BASE_ARMS and not arm.startswith("curated:"):
            raise WikiskillError(
                f"unknown uplift arm {arm!r}: use none, main, self-written, suite, raw or curated:PATH"
            )
    return ["none", *[arm for arm in dict.fromkeys(arms) if arm != "none"]]


def skill_names(files: Mapping[str, str]) -> list[str]:
    """The skills among `files` (paths under skills/): the folders holding a SKILL.md, not the
    loose files beside them such as `.gitkeep`."""
    return sorted(path.split("/")[0] for path in files if path.count("/") == 1 and path.endswith("/SKILL.md"))


def arm_branch(arm: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", arm.lower()).strip("-")
    return f"uplift/{slug}"


def arm_skill_files(harness: Harness, arm: str, split: Split) -> dict[str, str]:
    """`{path under skills/: text}` of an arm's skills."""
    if arm == "none":
        return {}
    if arm == "main":
        return harness.ws.read_files(MAIN, "skills")
    if arm == "self-written":
        return _self_written(harness)
    if arm == "suite":
        return _suite_skills(harness, split)
    if arm == "raw":
        return raw_skill(harness.ws)
    return curated_files(Path(arm.removeprefix("curated:")).expanduser())


def curated_files(folder: Path) -> dict[str, str]:
    """A folder of Agent Skills: `<name>/SKILL.md` (and their files) under it, or one skill."""
    if not folder.is_dir():
        raise WikiskillError(f"curated skills folder {folder} is not a folder")
    prefix = f"{folder.name}/" if (folder / "SKILL.md").is_file() else ""
    files = {
        prefix + path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink() and not any(part.startswith(".") for part in path.parts)
    }
    if not any(path.endswith("/SKILL.md") for path in files):
        raise WikiskillError(f"curated skills folder {folder} holds no <name>/SKILL.md")
    return files


def _suite_skills(harness: Harness, split: Split) -> dict[str, str]:
    files: dict[str, str] = {}
    for task in harness.benchmark.tasks(split):
        folder = task.metadata.get(TASK_DIR_KEY)
        if isinstance(folder, str) and (Path(folder) / "environment/skills").is_dir():
            for path, text in curated_files(Path(folder) / "environment/skills").items():
                files.setdefault(path, text)
    if not files:
        raise WikiskillError(
            "the suite arm needs a Harbor suite whose tasks ship environment/skills/; this one has none"
        )
    return files


def _self_written(harness: Harness) -> dict[str, str]:
    """The proposer's model's skills from the train instructions alone, written once: kept on
    `uplift/self-written` and read back from there by later runs."""
    branch = arm_branch("self-written")
    kept = harness.ws.read_files(branch, "skills") if harness.ws.head(branch) else {}
    if kept:
        return kept
    writer = harness.evaluating.team.skill_writer()
    try:
        written = writer.write([task.question for task in harness.benchmark.tasks("train")])
    except SkillsNotWritten as exc:  # its call failed, or no reply held skills after one repair
        raise ArmNotMade(exc.reason) from exc
    if not written:
        raise ArmNotMade("the self-written arm's model wrote no skills")
    return {f"{_folder_name(skill.name)}/SKILL.md": skill.skill_md for skill in written}


def _folder_name(name: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "skill"


def arm_ref(harness: Harness, name: str, skills: Mapping[str, str]) -> str:
    """A commit of main's tree (its wiki included) with skills/ replaced by `skills` (paths
    relative to skills/), on `uplift/<name>`; the branch as it is when it holds them already."""
    ws, branch = harness.ws, arm_branch(name)
    if ws.head(branch) and ws.read_files(branch, "skills") == dict(skills):
        if ws.tree_id(branch, "wiki") == ws.tree_id(MAIN, "wiki"):
            return branch
    changes: dict[str, str | None] = {path: None for path in ws.list_paths(MAIN, "skills")}
    changes.update({f"skills/{path}": text for path, text in skills.items()})
    message = format_message(
        f"uplift arm {name}: {len(skill_names(skills))} skill(s)", Trailers(step=Step.UPLIFT, cost_usd=0.0)
    )
    ws.commit(changes, message, branch=branch, base=ws.resolve(MAIN))
    return branch


@dataclass(frozen=True)
class Scored:
    """One arm's runs: each task's score per trial, the mean tokens and USD per task and trial,
    and per task its scored runs (trials times `gate.repeats`) and how many of them loaded each
    skill (what a CLI agent's transcript says it read)."""

    scores: dict[str, list[float]]
    tokens: float
    cost: float
    runs: Counter[str]
    loads: dict[str, Counter[str]]

    def loaded(self, skill: str) -> int:
        """The runs that loaded `skill`, over every task."""
        return sum(counts[skill] for counts in self.loads.values())


def scored(harness: Harness, ref: str, split: Split, trials: int, label: str) -> Scored:
    scores: dict[str, list[float]] = {}
    loads: dict[str, Counter[str]] = {}
    scored_runs: Counter[str] = Counter()
    used, cost, runs = 0, 0.0, 0
    for trial in range(trials):
        what = f"uplift {label} (trial {trial + 1}/{trials})"
        evaluated = harness.evaluating.evaluate(ref, split, what, first_repeat=trial)
        for task, score in evaluated.evaluation.scores.items():
            scores.setdefault(task, []).append(score)
        for run in evaluated.runs:
            for trajectory in run:
                used += trajectory.usage.prompt_tokens + trajectory.usage.completion_tokens
                cost += trajectory.usage.cost_usd
                if not trajectory.infra:
                    scored_runs[trajectory.task_id] += 1
                    loads.setdefault(trajectory.task_id, Counter()).update(set(trajectory.skills_loaded))
                runs += 1
    return Scored(scores, used / max(runs, 1), cost / max(runs, 1), scored_runs, loads)


def measure(
    harness: Harness,
    split: Split,
    trials: int,
    arms: list[str],
    per_skill: bool = True,
    not_made: Mapping[str, str] | None = None,
) -> UpliftResult:
    """Every arm on every task of `split`, `trials` times; with `per_skill`, each of main's skills
    left out in turn. An arm whose skills could not be made is reported in `not_made` with the
    reason, beside those already left out (`not_made` given), and the others are scored."""
    import numpy as np

    from .uplift_stats import Resampler, interval, pass_at_1, pass_hat_k

    missing = dict(not_made or {})
    refs: dict[str, str] = {}
    for arm in arms:
        try:
            refs[arm] = arm_ref(harness, arm, arm_skill_files(harness, arm, split))
        except ArmNotMade as exc:
            missing[arm] = str(exc)
    made = [arm for arm in arms if arm in refs]
    main_skills = skill_names(arm_skill_files(harness, "main", split))
    if per_skill:
        main = harness.ws.read_files(MAIN, "skills")
        for skill in main_skills:
            refs[f"without-{skill}"] = arm_ref(
                harness, f"without-{skill}", {p: t for p, t in main.items() if not p.startswith(f"{skill}/")}
            )
        if "main" not in refs:
            refs["main"] = arm_ref(harness, "main", main)
    results = {name: scored(harness, ref, split, trials, name) for name, ref in refs.items()}
    tasks = sorted(set.intersection(*(set(arm.scores) for arm in results.values())))
    if not tasks:
        raise WikiskillError(f"no {split} task was scored in every arm")
    matrix = {name: np.array([arm.scores[task][:trials] for task in tasks]) for name, arm in results.items()}
    resample = Resampler.of(len(tasks), harness.config.seed)
    means = {name: resample.means(scores) for name, scores in matrix.items()}
    none = matrix["none"].mean()
    arm_results = [
        ArmResult(
            arm,
            float(matrix[arm].mean()),
            interval(means[arm]),
            float(matrix[arm].mean() - none),
            interval(means[arm] - means["none"]),
            pass_at_1(matrix[arm]),
            pass_hat_k(matrix[arm]),
            results[arm].tokens,
            results[arm].cost,
            skill_names(harness.ws.read_files(refs[arm], "skills")),
        )
        for arm in made
    ]
    values = []
    loading = skill_loading(harness.config.agent)
    main_run = results["main"]
    for skill in main_skills if per_skill else []:
        contribution = float(matrix["main"].mean() - matrix[f"without-{skill}"].mean())
        ci = interval(means["main"] - means[f"without-{skill}"])
        text = harness.ws.read_file(MAIN, f"skills/{skill}/SKILL.md") or ""
        retire = ci[0] <= 0.0 and contribution <= 0.0
        if loading is not SkillLoading.ON_DEMAND:
            values.append(SkillValue(skill, contribution, ci, tokens(text), retire, loading=loading))
            continue
        main_scores = {task: main_run.scores[task][:trials] for task in tasks}
        without = results[f"without-{skill}"].scores
        purpose = harness.ws.read_file(MAIN, f"skills/{skill}/PURPOSE.md") or ""
        tasks_for = changed_tasks(main_scores, without) | named_tasks(purpose, tasks)
        found = triggers(skill, main_run.loads, main_run.runs, tasks, tasks_for)
        loads = main_run.loaded(skill)
        values.append(
            SkillValue(
                skill,
                contribution,
                ci,
                tokens(text),
                retire,
                loads,
                loads == 0,
                loading,
                found.tasks_for,
                found.rate_for,
                found.rate_other,
            )
        )
    return UpliftResult(split, trials, len(tasks), arm_results, values, not_made=missing)


def record(harness: Harness, result: UpliftResult) -> str:
    """Commit the result as uplift.json on `uplift/results`."""
    shown = ", ".join(f"{arm.arm} {arm.mean:.3f}" for arm in result.arms)
    body = f"{result.trials} trial(s) per task; per-skill values of {len(result.per_skill)} skill(s)."
    body += "".join(f"\nNot made: {arm}: {reason}" for arm, reason in result.not_made.items())
    message = format_message(
        f"uplift on {result.split}: {shown}", Trailers(step=Step.UPLIFT, tasks=result.tasks, cost_usd=0.0), body
    )
    return harness.ws.commit({RESULTS_FILE: result.to_json()}, message, branch=RESULTS_BRANCH)
