"""A Harbor job folder read as sessions: each trial's `agent/trajectory.json` (ATIF), its reward
read from `verifier/` by Harbor's rules (`benchmarks.harbor_reward`), its task named by the trial's
`result.json` or `config.json`.

A job folder holds one folder per trial (`<job>/<task>__<id>/`); a trial folder named on its own is
read as a job of one trial. Multi-step trials (`<trial>/steps/<step>/agent/`) are not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..benchmarks.harbor_reward import REWARD_JSON, REWARD_TEXT, read_reward
from ..core.errors import ConfigError, InfrastructureError, TranscriptError, WikiskillError, first_problem
from ..core.redact import Scrubber
from ..store.traces import Outcome, Provenance
from .atif_in import atif_trajectory, parse_atif, read_text
from .ingest import Session

HARBOR_JOB_FORMAT = "harbor-job"
TRAJECTORY = Path("agent") / "trajectory.json"
VERIFIER = "verifier"
RESULT = "result.json"
CONFIG = "config.json"
INSTRUCTION = "instruction.md"
M = TypeVar("M", bound=BaseModel)
TRIAL_SEPARATOR = "__"
"""Harbor names a trial `<task>__<short id>`."""


class _TaskConfig(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str | None = None
    name: str | None = None


class TrialConfig(BaseModel):
    """What wikiskill reads of a trial's config.json: its task."""

    model_config = ConfigDict(extra="ignore")

    task: _TaskConfig | None = None


class TrialResult(BaseModel):
    """What wikiskill reads of a trial's result.json: its task's name."""

    model_config = ConfigDict(extra="ignore")

    task_name: str | None = None


@dataclass(frozen=True)
class Trial:
    task: str
    """The task's name, as Harbor gives it (a folder's name, or `org/name` of a registry task)."""
    session: Session


def trial_folders(job: Path) -> list[Path]:
    """The trial folders of a job folder (the folder itself when it is a trial), in name order."""
    if (job / TRAJECTORY).is_file():
        return [job]
    if not job.is_dir():
        raise TranscriptError(f"{job}: no such folder")
    folders = sorted(folder for folder in job.iterdir() if (folder / TRAJECTORY).is_file())
    if not folders:
        raise TranscriptError(f"{job}: no trial in it (no <trial>/{TRAJECTORY.as_posix()}): is it a Harbor job folder?")
    return folders


def read_trial(folder: Path, reward_key: str | None, scrub: Scrubber) -> Trial:
    """One trial as a session; TranscriptError naming the file that does not read."""
    config = _read_model(folder / CONFIG, TrialConfig, scrub) or TrialConfig()
    result = _read_model(folder / RESULT, TrialResult, scrub) or TrialResult()
    task = task_name(folder, config, result)
    reward = trial_reward(folder, reward_key, task)
    outcome = Outcome.UNKNOWN if reward is None else Outcome.SUCCESS if reward >= 1.0 else Outcome.FAILURE
    path = folder / TRAJECTORY
    text = read_text(path, scrub)
    doc = parse_atif(text, str(path))
    source = Provenance(format=HARBOR_JOB_FORMAT, file=folder.name, outcome=outcome)
    trajectory = atif_trajectory(doc, text, str(path), task, source, reward or 0.0, _instruction(config, scrub))
    return Trial(task, Session(folder, trajectory))


def read_job(job: Path, reward_key: str | None) -> list[Trial]:
    """Every trial of a Harbor job folder, each read before any is returned."""
    scrub = Scrubber()
    return [read_trial(folder, reward_key, scrub) for folder in trial_folders(job)]


def refuse_held_tasks(trials: list[Trial], held: Mapping[str, str]) -> None:
    """Refuse, naming it, a trial of a task the suite holds out (`held`: task id to split)."""
    for trial in trials:
        split = held.get(trial.task) or held.get(trial.task.rpartition("/")[2])
        if split:
            raise WikiskillError(
                f"{trial.session.source}: task {trial.task!r} is in the suite's {split} split; "
                "ingested trials are train experience only, so none was ingested"
            )


def task_name(folder: Path, config: TrialConfig, result: TrialResult) -> str:
    """The trial's task: result.json's `task_name`, else config.json's task name or its folder's
    name, else the trial folder's name before `__`."""
    if result.task_name:
        return result.task_name
    if config.task is not None and config.task.name:
        return config.task.name
    if config.task is not None and config.task.path:
        return Path(config.task.path).name
    return folder.name.split(TRIAL_SEPARATOR)[0]


def trial_reward(folder: Path, reward_key: str | None, task: str) -> float | None:
    """The verifier's reward, None when it left none (the trial ended before it ran); a reward
    file that does not read as Harbor reads it raises TranscriptError naming the trial."""
    logs = folder / VERIFIER
    if not (logs / REWARD_TEXT).is_file() and not (logs / REWARD_JSON).is_file():
        return None
    try:
        return read_reward(logs, reward_key, task)
    except (InfrastructureError, ConfigError) as exc:
        raise TranscriptError(f"{logs}: {exc}") from None


def _instruction(config: TrialConfig, scrub: Scrubber) -> str | None:
    """The task's instruction.md, where the trial's config names a task folder that is here."""
    if config.task is None or not config.task.path:
        return None
    path = Path(config.task.path).expanduser() / INSTRUCTION
    return read_text(path, scrub) if path.is_file() else None


def _read_model(path: Path, model: type[M], scrub: Scrubber) -> M | None:
    if not path.is_file():
        return None
    try:
        return model.model_validate_json(read_text(path, scrub))
    except ValidationError as exc:
        raise TranscriptError(f"{path}: {first_problem(exc, 'the document')}") from None
