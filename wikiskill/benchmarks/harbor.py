"""`harbor:PATH` suites: Harbor-format task folders read as they are published (Terminal-Bench
2.x, SkillsBench, Harbor's adapters), a folder of task folders or one task folder alone.

    <task>/instruction.md           the prompt
    <task>/task.toml                [metadata], [agent], [verifier], [solution], [environment] (`HarborTaskConfig`)
    <task>/environment/Dockerfile   and its build context (or `[environment] docker_image`, and/or
                                    a docker-compose.yaml with the service `main` and its sidecars)
    <task>/tests/test.sh            the verifier, copied into the container only after the agent
    <task>/solution/solve.sh        optional: what the `oracle` agent runs

Unknown fields of task.toml are kept and ignored (the schema is versioned and grows). A task
that cannot be read (a malformed task.toml, a missing instruction.md, tests/test.sh or
environment/Dockerfile, a non-numeric timeout) is left out of the suite with its reason, one
line naming the file (`HarborSuite.unreadable`; `init` and `check-suite` list them); a suite with
no readable task is refused. `harbor.exclude` leaves tasks out by id or glob pattern, as Harbor's
`--exclude-task-name` does. Harbor datasets have no splits: wikiskill.yaml's `harbor` section
gives explicit id lists, or a seeded split stratified by `[metadata] category` of the sizes in
`splits` (`harbor_split`); the split enters the suite's setup digest, so the evaluation
fingerprint.
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core.errors import BenchmarkError
from ..core.text import read_utf8
from .base import SPLITS, BenchmarkKind, BenchmarkSpec, ReferenceSuite, Split, Task
from .harbor_network import NetworkMode, NetworkPolicy, Phase, baseline, explicit_policy
from .settings import HarborSettings, SplitSizes
from .specs import QA_MAX_STEPS

TASK_TOML = "task.toml"
INSTRUCTION = "instruction.md"
ENVIRONMENT_DIR = "environment"
DOCKERFILE = "Dockerfile"
COMPOSE_FILE = "docker-compose.yaml"
"""Harbor's multi-container environment: a service `main` (where the agent and the verifier
run) and sidecars beside it."""
SUITE_SKILLS_DIR = "skills"
"""The suite's own skills in a task's environment/ (SkillsBench), which its Dockerfile may copy in."""
TESTS_DIR = "tests"
TEST_SCRIPT = "test.sh"
SOLUTION_DIR = "solution"
SOLVE_SCRIPT = "solve.sh"
TASK_DIR_KEY = "harbor_dir"
AGENT_TIMEOUT_KEY = "agent_timeout_s"
"""The keys of `Task.metadata` that give a task's folder and its `[agent] timeout_sec`."""
IGNORED = frozenset({"__pycache__", ".pytest_cache", ".git", ".DS_Store"})
DEFAULT_SHARES = (0.5, 0.25)
"""Train's and val's shares of a stratified split whose sizes are unset; test takes the rest."""

HARBOR = BenchmarkSpec(
    family="harbor",
    kind=BenchmarkKind.WORKDIR,
    summary="Harbor-format task folders (Terminal-Bench, SkillsBench, Harbor adapters), each task in "
    "its own container, its tests copied in after the agent",
    argument="PATH",
    argument_required=True,
    max_steps=QA_MAX_STEPS,
    version="1",
    examples=("harbor:benchmarks/harbor-example",),
    containers=True,
    registry_datasets=True,
)


class _Table(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class MetadataTable(_Table):
    author_name: str | None = None
    author_email: str | None = None
    difficulty: str | None = None
    category: str | None = None
    tags: list[str] = []


class _PhaseTable(_Table):
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = []

    def policy(self, where: str) -> NetworkPolicy | None:
        return explicit_policy(self.network_mode, self.allowed_hosts, where)


class AgentTable(_PhaseTable):
    timeout_sec: float = Field(600.0, gt=0)


class VerifierTable(_PhaseTable):
    timeout_sec: float = Field(600.0, gt=0)
    env: dict[str, str] = {}


class SolutionTable(_Table):
    env: dict[str, str] = {}


class EnvironmentTable(_Table):
    build_timeout_sec: float = Field(600.0, gt=0)
    docker_image: str | None = None
    workdir: str | None = None
    cpus: float | None = Field(None, gt=0)
    memory_mb: int | None = Field(None, gt=0)
    storage_mb: int | None = Field(None, gt=0)
    allow_internet: bool | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = []
    env: dict[str, str] = {}

    @model_validator(mode="before")
    @classmethod
    def _sizes_as_megabytes(cls, data: Any) -> Any:
        """The older `memory = "4G"` and `storage = "8G"` as Harbor converts them."""
        if isinstance(data, dict):
            data = dict(data)
            for old, new in (("memory", "memory_mb"), ("storage", "storage_mb")):
                if data.get(old) is not None:
                    data[new] = size_in_mb(data.pop(old), old)
        return data

    def baseline(self) -> NetworkPolicy:
        return baseline(self.network_mode, self.allowed_hosts, self.allow_internet)


def size_in_mb(size: object, field: str) -> int:
    """`4G`, `512M` or `1024K` in megabytes (a G is 1024 M), as Harbor reads them."""
    text = str(size).strip().upper()
    units = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}
    try:
        return int(float(text[:-1]) * units[text[-1:]])
    except (KeyError, ValueError):
        raise ValueError(f"{field} = {size!r} is not a size like '4G', '512M' or '1024K'") from None


class HarborTaskConfig(_Table):
    """task.toml; each table keeps the fields it does not know (`extra="allow"`)."""

    version: str | None = None
    metadata: MetadataTable = MetadataTable()
    agent: AgentTable = AgentTable()
    verifier: VerifierTable = VerifierTable()
    solution: SolutionTable = SolutionTable()
    environment: EnvironmentTable = EnvironmentTable()

    @model_validator(mode="after")
    def _policies_are_valid(self) -> HarborTaskConfig:
        self.network(Phase.AGENT)
        self.network(Phase.VERIFIER)
        return self

    def network(self, phase: Phase) -> NetworkPolicy:
        """The phase's own `network_mode`, else the environment's baseline."""
        table = self.agent if phase == Phase.AGENT else self.verifier
        return table.policy(phase.value) or self.environment.baseline()

    @property
    def needs_network(self) -> bool:
        return any(self.network(phase).needs_network for phase in Phase)


@dataclass(frozen=True)
class HarborTask:
    """One task folder, checked."""

    folder: Path
    config: HarborTaskConfig
    instruction: str

    @property
    def id(self) -> str:
        return self.folder.name

    @property
    def context(self) -> Path:
        return self.folder / ENVIRONMENT_DIR

    @property
    def has_dockerfile(self) -> bool:
        return (self.context / DOCKERFILE).is_file()

    @property
    def compose_file(self) -> Path | None:
        path = self.context / COMPOSE_FILE
        return path if path.is_file() else None

    @property
    def tests(self) -> Path:
        return self.folder / TESTS_DIR

    @property
    def solve_script(self) -> Path | None:
        path = self.folder / SOLUTION_DIR / SOLVE_SCRIPT
        return path if path.is_file() else None


def read_task(folder: Path) -> HarborTask:
    """One task folder, refused in one line naming the file that is wrong."""
    toml_path = folder / TASK_TOML
    if not toml_path.is_file():
        raise BenchmarkError(f"{toml_path} is missing")
    try:
        data = tomllib.loads(read_utf8(toml_path, BenchmarkError))
    except tomllib.TOMLDecodeError as exc:
        raise BenchmarkError(f"{toml_path}: not valid TOML ({' '.join(str(exc).split())})") from exc
    try:
        config = HarborTaskConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BenchmarkError(f"{toml_path}: {where}: {first['msg']} (got {first.get('input')!r})") from exc
    instruction_path = folder / INSTRUCTION
    if not instruction_path.is_file():
        raise BenchmarkError(f"{instruction_path} is missing: it is the task's prompt")
    instruction = read_utf8(instruction_path, BenchmarkError).strip()
    if not instruction:
        raise BenchmarkError(f"{instruction_path} is empty")
    if not (folder / TESTS_DIR / TEST_SCRIPT).is_file():
        raise BenchmarkError(f"{folder / TESTS_DIR / TEST_SCRIPT} is missing: it is the task's verifier")
    task = HarborTask(folder, config, instruction)
    if not task.has_dockerfile and not config.environment.docker_image and task.compose_file is None:
        raise BenchmarkError(
            f"{task.context / DOCKERFILE} is missing (or set [environment] docker_image in {toml_path}, "
            f"or write {task.context / COMPOSE_FILE})"
        )
    return task


def task_folders(directory: Path) -> list[Path]:
    """`directory` itself when it is a task folder, else its task folders (those with task.toml)."""
    if (directory / TASK_TOML).is_file():
        return [directory]
    found = sorted(
        entry
        for entry in directory.iterdir()
        if entry.is_dir() and entry.name not in IGNORED and (entry / TASK_TOML).is_file()
    )
    if not found:
        raise BenchmarkError(f"{directory}: no Harbor task folders (folders with a {TASK_TOML})")
    return found


def read_tasks(folders: list[Path], exclude: list[str]) -> tuple[list[HarborTask], dict[str, str]]:
    """The readable tasks of `folders` that `exclude` (ids or glob patterns) leaves in, and why
    each unreadable one cannot be read, by id."""
    tasks, unreadable = [], {}
    for folder in folders:
        if any(fnmatchcase(folder.name, pattern) for pattern in exclude):
            continue
        try:
            tasks.append(read_task(folder))
        except BenchmarkError as exc:
            unreadable[folder.name] = str(exc)
    return tasks, unreadable


def harbor_split(
    tasks: list[HarborTask],
    settings: HarborSettings,
    sizes: SplitSizes,
    where: str,
    unreadable: dict[str, str] | None = None,
) -> dict[Split, list[str]]:
    """The task ids of each split: the explicit lists, or a seeded stratified split."""
    known = {task.id for task in tasks}
    if settings.ids.given:
        split = {name: list(getattr(settings.ids, name)) for name in SPLITS}
        for name, ids in split.items():
            broken = [task_id for task_id in ids if task_id in (unreadable or {})]
            if broken:
                raise BenchmarkError(f"harbor.ids.{name}: {broken[0]} cannot be read: {(unreadable or {})[broken[0]]}")
            unknown = sorted(set(ids) - known)
            if unknown:
                raise BenchmarkError(f"{where}: harbor.ids.{name}: no task {', '.join(unknown)} in the suite")
        return split
    order = _stratified_order(tasks, settings.split_seed)
    total = len(order)
    wanted = {name: getattr(sizes, name) for name in SPLITS}
    train = wanted["train"] if wanted["train"] is not None else max(1, round(total * DEFAULT_SHARES[0]))
    val = wanted["val"] if wanted["val"] is not None else min(total - train, max(1, round(total * DEFAULT_SHARES[1])))
    test = wanted["test"] if wanted["test"] is not None else max(0, total - train - val)
    if train + val + test > total:
        raise BenchmarkError(f"{where}: splits of {train} + {val} + {test} tasks, but the suite has {total}")
    return {"train": order[:train], "val": order[train : train + val], "test": order[train + val : train + val + test]}


def _stratified_order(tasks: list[HarborTask], seed: int) -> list[str]:
    """Every id, each category shuffled by `seed` and the categories dealt in turn, so any prefix
    holds the categories in proportion."""
    groups: dict[str, list[str]] = {}
    for task in sorted(tasks, key=lambda task: task.id):
        groups.setdefault(task.config.metadata.category or "", []).append(task.id)
    rng = random.Random(seed)
    queues = []
    for category in sorted(groups):
        ids = groups[category]
        rng.shuffle(ids)
        queues.append(ids)
    order: list[str] = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop(0))
    return order


@runtime_checkable
class ContainerSuite(ReferenceSuite, Protocol):
    """A suite whose tasks each run in containers of their own, read as Harbor task folders
    (`HarborTask`): `run/harbor_tasks.py` plays each task in its container and verifies it there, the
    reference agents (`oracle`, `nop`) check its references. Asked as `isinstance(suite,
    ContainerSuite)`, never by the suite's class, so another family whose suites have these
    members is played the same way."""

    directory: Path
    settings: HarborSettings
    by_id: dict[str, HarborTask]
    """Its readable tasks by id."""
    unreadable: dict[str, str]
    """The tasks left out because they cannot be read, with the reason."""
    split_ids: dict[Split, list[str]]

    def task(self, task: Task) -> HarborTask: ...

    def as_task(self, task: HarborTask, split: Split) -> Task: ...

    def counts(self) -> dict[Split, int]: ...


class HarborSuite:
    """A workdir suite of Harbor task folders, each played in its own container
    (`run/harbor_tasks.py`): a `ContainerSuite`."""

    checks_references = True

    def __init__(
        self,
        directory: Path,
        settings: HarborSettings | None = None,
        sizes: SplitSizes | None = None,
        spec: BenchmarkSpec = HARBOR,
    ):
        directory = directory.expanduser()
        if not directory.is_dir():
            raise BenchmarkError(f"Harbor suite {directory} does not exist")
        self.directory = directory.resolve()
        self.name = f"harbor:{self.directory}"
        self.spec = spec
        self.settings = settings or HarborSettings()
        tasks, self.unreadable = read_tasks(task_folders(self.directory), self.settings.exclude)
        if not tasks:
            if not self.unreadable:
                raise BenchmarkError(f"{self.directory}: harbor.exclude leaves no task")
            first = next(iter(self.unreadable.values()))
            many = len(self.unreadable) > 1
            raise BenchmarkError(f"no task of {self.directory} can be read; the first: {first}" if many else first)
        self.by_id = {task.id: task for task in tasks}
        self.unsound: dict[str, str] = {}
        """Tasks taken out of every split as unsound (`leave_out`), with the reason."""
        self.split_ids = harbor_split(tasks, self.settings, sizes or SplitSizes(), str(self.directory), self.unreadable)
        self._digest: str | None = None

    def tasks(self, split: Split) -> list[Task]:
        if split not in SPLITS:
            raise BenchmarkError(f"unknown split {split!r}")
        return [self.as_task(self.by_id[task_id], split) for task_id in self.split_ids[split]]

    @staticmethod
    def as_task(task: HarborTask, split: Split) -> Task:
        return Task(
            id=task.id,
            split=split,
            question=task.instruction,
            metadata={TASK_DIR_KEY: str(task.folder), AGENT_TIMEOUT_KEY: task.config.agent.timeout_sec},
        )

    def task(self, task: Task) -> HarborTask:
        return self.by_id[task.id]

    def leave_out(self, unsound: dict[str, str]) -> None:
        """Take the `unsound` tasks out of every split; the split, so the setup digest, changes."""
        self.unsound = dict(unsound)
        self.split_ids = {split: [i for i in ids if i not in unsound] for split, ids in self.split_ids.items()}
        self._digest = None

    def counts(self) -> dict[Split, int]:
        return {split: len(ids) for split, ids in self.split_ids.items()}

    def prepare(self, splits: tuple[Split, ...]) -> None:
        """Nothing to prepare: images are built when a task first needs one."""

    def setup_digest(self) -> str:
        """Every file of every task folder by path and content, the split, the reward key and how
        images are made (`force_build`, `suite_skills`)."""
        if self._digest is None:
            hasher = hashlib.sha256()
            for task in sorted(self.by_id.values(), key=lambda task: task.id):
                for path in sorted(_files(task.folder)):
                    hasher.update(str(path.relative_to(self.directory)).encode() + b"\0")
                    hasher.update(path.read_bytes() + b"\0")
            hasher.update(repr(sorted(self.split_ids.items())).encode())
            hasher.update(repr(self.settings.reward_key).encode())
            hasher.update(repr((self.settings.force_build, self.settings.suite_skills.value)).encode())
            self._digest = hasher.hexdigest()[:24]
        return self._digest


def _files(folder: Path) -> list[Path]:
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and not IGNORED.intersection(path.relative_to(folder).parts)
    ]
