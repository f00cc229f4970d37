"""`tasks:PATH` suites: your own tasks as folders, scored by a check command, an LLM judge, a
function of yours or a QA scorer.

    PATH/suite.yaml                      the scorer and its settings (`SuiteSettings`)
    PATH/{train,val,test}/<task-id>/
        task.md                          the prompt
        files/                           copied into the task's fresh working directory
        answer                           the reference answer (QA scorers)
        rubric.md | expectations         what a judge grades (one expectation a line)
        solution/                        optional: files that, laid over files/, solve the task
                                         (`check-suite` checks it scores 1; no agent sees it)

The whole folder is checked when the suite is opened, and anything wrong is refused in one
line naming the file: a missing task.md, a check command that is not executable, an unknown
scorer or setting, an id used twice across splits, an empty split, a file a task folder does
not take. A suite scored by a QA scorer (`exact`, `contains`, `numeric`, `regex`) against
`answer` files is a QA suite like `jsonl:DIR`; any other is a workdir suite.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import shlex
import shutil
import sys
from enum import StrEnum
from functools import cached_property
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..core.errors import BenchmarkError
from ..core.parts import SCORER
from ..core.registry import import_object
from ..core.text import read_utf8
from ..core.yaml_reading import SAFE
from .base import SPLITS, BenchmarkKind, BenchmarkSpec, Split, Task
from .scoring import Scorer, get_scorer
from .specs import QA_MAX_STEPS

SUITE_FILE = "suite.yaml"
TASK_FILE = "task.md"
FILES_DIR = "files"
ANSWER_FILE = "answer"
RUBRIC_FILE = "rubric.md"
EXPECTATIONS_FILE = "expectations"
SOLUTION_DIR = "solution"
TASK_ENTRIES = frozenset({TASK_FILE, FILES_DIR, ANSWER_FILE, RUBRIC_FILE, EXPECTATIONS_FILE, SOLUTION_DIR})
DRAFT_MARKER = "REVIEW.md"
"""Marks a task drafted by `wikiskill tasks from-sessions`: the suite is refused until a person
has reviewed the task and deleted it."""
TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
PYTHON_SCORER = re.compile(r"python:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
IGNORED = frozenset({"__pycache__", ".pytest_cache", ".git", ".DS_Store"})
"""Names left out of the suite's digest (what running or editing tools leave behind)."""

TASKS = BenchmarkSpec(
    family="tasks",
    kind=BenchmarkKind.WORKDIR,
    summary="your own tasks as folders: PATH/{train,val,test}/<id>/task.md (+ files/), scored by a "
    "check command, an LLM judge or a QA scorer (PATH/suite.yaml)",
    argument="PATH",
    argument_required=True,
    max_steps=QA_MAX_STEPS,
    version="1",
)


class ScorerName(StrEnum):
    """The built-in workdir scorers; a QA scorer's name or `python:MODULE:FUNCTION` also serve."""

    COMMAND = "command"
    JUDGE = "judge"


class VerifierTimeout(StrEnum):
    """What a check that runs past its `timeout` is: the task's failure (it ran the agent's
    code: `failure: timeout`, scored 0), or an infrastructure failure (retried `infra.retries` times, never scored)."""

    TASK = "task"
    INFRA = "infra"


class CrashRule(StrEnum):
    """What a check that crashes in its own code on the agent's work is (`run/crash_rule.py`)."""

    FAILURE = "failure"
    """The task's failure: scored 0, the end of the check's output its feedback (a check that
    calls what the agent returned says "wrong" by crashing on it)."""
    INFRA = "infra"
    """An infrastructure failure: retried `infra.retries` times, never scored."""


class SuiteSettings(BaseModel):
    """suite.yaml: how a task-folder suite is scored."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    scorer: str
    """`command` (a check run in the task's workdir), `judge` (an LLM judge grades the answer and
    the changed files against each task's rubric.md or expectations), `python:MODULE:FUNCTION`
    (your `score(task, trajectory, workdir) -> Score`), or a QA scorer (`exact`, `contains`,
    `numeric`, `regex`) against each task's `answer` file."""
    command: str | None = None
    """`command`: the check, run without a shell in the task's working directory after the agent
    (e.g. `python -m pytest -q`); a program named by a relative path is the suite folder's. It
    gets `WIKISKILL_TASK_DIR` (the task's folder) and `WIKISKILL_SUITE_DIR` in its environment.
    Exit 0 scores 1; otherwise a last stdout line `score: X` gives X, or `junit` the share passed."""
    timeout: float = Field(60.0, gt=0)
    """`command`: seconds the check may run; then it and every process it started are killed and
    the task fails with the timeout as its error (`failure: timeout`, scored 0; see
    `verifier_timeout`)."""
    verifier_timeout: VerifierTimeout = VerifierTimeout.TASK
    """`task`: a check past its `timeout` is the task's failure (the agent's code ran too long);
    `infra`: it is an infrastructure failure (a slow machine, a hung service), retried `infra.retries` times and,
    failing again, left out of the score."""
    crash: CrashRule | None = None
    """`command`: what a check that crashes in its own code (a Python traceback with no frame in
    the workdir) is on the agent's work: `failure` (scored 0, the traceback's tail the feedback) or
    `infra` (retried `infra.retries` times, never scored). Unset: decided per task from evidence about the check,
    which `check-suite` prints: `failure` when the task's solution/ scores 1, or, without one, when
    the check also crashes on the untouched files; else `infra`."""
    junit: str | None = None
    """`command`: a JUnit XML report the check writes, relative to the workdir (e.g. `report.xml`
    with `pytest --junitxml=report.xml`): a failed check scores the share of tests passed."""
    feedback_chars: int = Field(2000, ge=100)
    """The most characters of written feedback kept per task (failing tests' names and messages,
    a judge's reasons)."""

    @field_validator("scorer")
    @classmethod
    def _known_scorer(cls, value: str) -> str:
        text = value.strip()
        if text in {*ScorerName, *SCORER.names()} or PYTHON_SCORER.fullmatch(text):
            return text
        names = ", ".join([*ScorerName, *SCORER.names(), "python:MODULE:FUNCTION"])
        raise ValueError(f"unknown scorer {text!r}; choose one of: {names}")

    @model_validator(mode="after")
    def _command_settings(self) -> SuiteSettings:
        is_command = self.scorer == ScorerName.COMMAND
        if is_command and not (self.command or "").strip():
            raise ValueError("scorer: command needs `command:`, the check to run (e.g. python -m pytest -q)")
        given = [key for key in ("command", "junit", "crash") if getattr(self, key) is not None]
        if given and not is_command:
            raise ValueError(f"{', '.join(given)} is for scorer: command, not {self.scorer}")
        return self

    @property
    def qa(self) -> bool:
        """Scored by a QA scorer against `answer` files: a QA suite."""
        return self.scorer in SCORER.names()

    @property
    def judged(self) -> bool:
        return self.scorer == ScorerName.JUDGE


def read_settings(directory: Path) -> SuiteSettings:
    path = directory / SUITE_FILE
    if not path.is_file():
        raise BenchmarkError(
            f"{path} is missing: it names the scorer (e.g. `scorer: command` and `command: python -m pytest -q`)"
        )
    try:
        data = SAFE.load(read_utf8(path, BenchmarkError))
    except yaml.YAMLError as exc:
        raise BenchmarkError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    if not isinstance(data, dict):
        raise BenchmarkError(f"{path}: must be a mapping of settings, e.g. `scorer: command`")
    try:
        return SuiteSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            message = f"unknown setting (suite.yaml takes {', '.join(SuiteSettings.model_fields)})"
        raise BenchmarkError(f"{path}: {where + ': ' if where else ''}{message}") from exc


def check_command(settings: SuiteSettings, directory: Path) -> list[str]:
    """The check as arguments, its program made absolute; refused when it cannot be run."""
    try:
        words = shlex.split(settings.command or "")
    except ValueError as exc:
        raise BenchmarkError(f"{directory / SUITE_FILE}: command: cannot be split into words ({exc})") from exc
    program = words[0]
    if "/" in program:
        path = (directory / Path(program).expanduser()).resolve()
        if not path.is_file() or not os.access(path, os.X_OK):
            state = "is not executable" if path.is_file() else "does not exist"
            raise BenchmarkError(f"{directory / SUITE_FILE}: command: {path} {state}")
        return [str(path), *words[1:]]
    found = shutil.which(program)
    if found is None:
        raise BenchmarkError(f"{directory / SUITE_FILE}: command: {program!r} is not an executable on PATH")
    return [found, *words[1:]]


class TaskFolders:
    """A suite read from task folders, checked whole when opened: a workdir suite whose `scoring`
    names its scorer (`run/scorers.py`), or a `QABenchmark` under a QA scorer."""

    def __init__(self, directory: Path, spec: BenchmarkSpec = TASKS):
        directory = directory.expanduser()
        if not directory.is_dir():
            raise BenchmarkError(f"task folder suite {directory} does not exist")
        self.directory = directory.resolve()
        self.name = f"tasks:{self.directory}"
        self.scoring = read_settings(self.directory)
        self.command = check_command(self.scoring, self.directory) if self.scoring.command else None
        if PYTHON_SCORER.fullmatch(self.scoring.scorer):
            try:
                import_object(self.scoring.scorer.removeprefix("python:"))
            except Exception as exc:  # noqa: BLE001 - the user's import may raise anything
                raise BenchmarkError(
                    f"{self.directory / SUITE_FILE}: scorer: cannot load "
                    f"{self.scoring.scorer} ({type(exc).__name__}: {exc})"
                ) from exc
        kind = BenchmarkKind.QA if self.scoring.qa else BenchmarkKind.WORKDIR
        self.spec = spec.model_copy(update={"kind": kind, "judged": self.scoring.judged})
        self._tasks = self._read_all()
        self.unsound: dict[str, str] = {}
        """Tasks taken out of every split as unsound (`leave_out`), with the reason."""
        self._digest: str | None = None

    def tasks(self, split: Split) -> list[Task]:
        if split not in SPLITS:
            raise BenchmarkError(f"unknown split {split!r}")
        return [task for task in self._tasks[split] if task.id not in self.unsound]

    @property
    def checks_references(self) -> bool:
        """Its tasks' solution/ is checked with the suite's own scorer before an evolve spends on
        them (`run/crash_rule.py`), unless it is scored by answers or a judge (a `ReferenceSuite`)."""
        return not self.scoring.qa and not self.scoring.judged

    def leave_out(self, unsound: dict[str, str]) -> None:
        """Take the `unsound` tasks out of every split; the setup digest changes with them."""
        self.unsound = dict(unsound)
        self._digest = None

    def all_tasks(self) -> list[Task]:
        """Every task of every split, left-out ones included."""
        return [task for split in SPLITS for task in self._tasks[split]]

    def prepare(self, splits: tuple[Split, ...]) -> None:
        """Nothing to prepare: every task was read and checked when the suite was opened."""

    def folder(self, task: Task) -> Path:
        return self.directory / task.split / task.id

    def solution(self, task: Task) -> Path | None:
        """The task's `solution/` folder, the files that solve it laid over its files; None without."""
        path = self.folder(task) / SOLUTION_DIR
        return path if path.is_dir() else None

    def score(self, task: Task, prediction: str | None) -> float:
        """A QA suite's score of `prediction` against the task's `answer`."""
        return float(self._answer_scorer(prediction, task.answer or ""))

    @cached_property
    def _answer_scorer(self) -> Scorer:
        return get_scorer(self.scoring.scorer)

    def setup_digest(self) -> str:
        """Every file of the suite (suite.yaml, checks, prompts, files, rubrics) by path and
        content, and the source of a `python:` scorer's module."""
        if self._digest is None:
            hasher = hashlib.sha256()
            for path in sorted(_suite_files(self.directory)):
                hasher.update(str(path.relative_to(self.directory)).encode() + b"\0")
                hasher.update(path.read_bytes() + b"\0")
            if PYTHON_SCORER.fullmatch(self.scoring.scorer):
                hasher.update(_module_source(self.scoring.scorer.removeprefix("python:")).encode())
            hasher.update(repr(sorted(self.unsound)).encode())
            self._digest = hasher.hexdigest()[:24]
        return self._digest

    def task_digest(self, task: Task) -> str:
        """The files one task's check depends on by path and content: its folder, and every file of
        the suite outside the split folders (suite.yaml, the check's scripts)."""
        hasher = hashlib.sha256()
        for path in sorted(_suite_files(self.directory)):
            relative = path.relative_to(self.directory)
            if relative.parts[0] not in SPLITS or relative.parts[:2] == (task.split, task.id):
                hasher.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
        return hasher.hexdigest()

    def _read_all(self) -> dict[Split, list[Task]]:
        first_seen: dict[str, Path] = {}
        tasks: dict[Split, list[Task]] = {}
        for split in SPLITS:
            folder = self.directory / split
            if not folder.is_dir():
                raise BenchmarkError(f"{folder} is missing: a suite needs train/, val/ and test/ folders of tasks")
            entries = sorted(entry for entry in folder.iterdir() if entry.name not in IGNORED)
            tasks[split] = []
            for entry in entries:
                if not entry.is_dir():
                    raise BenchmarkError(f"{entry}: a split holds task folders only")
                if entry.name in first_seen:
                    raise BenchmarkError(f"{entry}: duplicate task id {entry.name!r} (also {first_seen[entry.name]})")
                first_seen[entry.name] = entry
                tasks[split].append(self._read_task(entry, split))
            if not tasks[split]:
                raise BenchmarkError(f"{folder}: no tasks (the split is empty)")
        return tasks

    def _read_task(self, folder: Path, split: Split) -> Task:
        if not TASK_ID.fullmatch(folder.name):
            raise BenchmarkError(f"{folder}: a task id is letters, digits, '.', '_' and '-' (at most 100)")
        if (folder / DRAFT_MARKER).exists():
            raise BenchmarkError(
                f"{folder}: a draft from `wikiskill tasks from-sessions`: review task.md and "
                f"rubric.md, then delete {DRAFT_MARKER}"
            )
        unknown = sorted(
            entry.name for entry in folder.iterdir() if entry.name not in TASK_ENTRIES and entry.name not in IGNORED
        )
        if unknown:
            raise BenchmarkError(
                f"{folder}: unknown {', '.join(unknown)} (a task folder holds {', '.join(sorted(TASK_ENTRIES))})"
            )
        question = _read_required(folder / TASK_FILE)
        if not question.strip():
            raise BenchmarkError(f"{folder / TASK_FILE} is empty")
        files = folder / FILES_DIR
        for entry in (files, folder / SOLUTION_DIR):
            if entry.exists() and not entry.is_dir():
                raise BenchmarkError(f"{entry} must be a folder")
        answer = _read_text(folder / ANSWER_FILE)
        rubric = _read_text(folder / RUBRIC_FILE)
        expectations = [
            line.strip() for line in (_read_text(folder / EXPECTATIONS_FILE) or "").splitlines() if line.strip()
        ]
        where = f"{folder} (scorer: {self.scoring.scorer})"
        if self.scoring.qa:
            if answer is None:
                raise BenchmarkError(f"{where}: missing {ANSWER_FILE}, the reference answer")
            if files.is_dir():
                raise BenchmarkError(
                    f"{where}: a QA scorer reads the answer only; files/ needs a workdir "
                    "scorer (command, judge or python:MODULE:FUNCTION)"
                )
        if self.scoring.judged:
            if rubric is None and not expectations:
                raise BenchmarkError(f"{where}: missing {RUBRIC_FILE} or {EXPECTATIONS_FILE}, what the judge grades")
            if rubric is not None and expectations:
                raise BenchmarkError(f"{where}: give {RUBRIC_FILE} or {EXPECTATIONS_FILE}, not both")
        metadata: dict[str, object] = {}
        if rubric is not None:
            metadata["rubric"] = rubric.strip()
        if expectations:
            metadata["expectations"] = expectations
        return Task(
            id=folder.name,
            split=split,
            question=question.strip(),
            answer=answer.strip() if answer is not None else None,
            metadata=metadata,
            files=files if files.is_dir() else None,
        )


def _read_required(path: Path) -> str:
    text = _read_text(path)
    if text is None:
        raise BenchmarkError(f"{path} is missing")
    return text


def _read_text(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        return read_utf8(path, BenchmarkError)
    except OSError as exc:
        raise BenchmarkError(f"{path}: cannot be read ({exc})") from exc


def _module_source(path: str) -> str:
    module = sys.modules.get(path.partition(":")[0])
    try:
        return inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return ""


def _suite_files(directory: Path) -> list[Path]:
    found = []
    for root, folders, files in os.walk(directory):
        folders[:] = [name for name in folders if name not in IGNORED]
        found += [Path(root) / name for name in files if name not in IGNORED]
    return found
