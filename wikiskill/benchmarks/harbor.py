"""`harbor:PATH` suites: Harbor-format task folders read as they are published (Terminal-Bench
2.x, SkillsBench, Harbor's adapters), a folder of task folders or one task folder alone.

    <task>/instruction.md           the prompt
    <task>/task.toml                [metadata], [agent], [verifier], [environment] (`HarborTaskConfig`)
    <task>/environment/Dockerfile   and its build context (or `[environment] docker_image`)
    <task>/tests/test.sh            the verifier, copied into the container only after the agent
    <task>/solution/solve.sh        optional: what the `oracle` agent runs

Unknown fields of task.toml are kept and ignored (the schema is versioned and grows); a malformed
task.toml, a missing instruction.md, tests/test.sh or environment/Dockerfile, or a non-numeric
timeout is refused in one line naming the file. Harbor datasets have no splits: wikiskill.yaml's
`harbor` section gives explicit id lists, or a seeded split stratified by `[metadata] category`
of the sizes in `splits` (`harbor_split`); the split enters the suite's setup digest, so the
evaluation fingerprint.
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.config import HarborSettings, SplitSizes
from ..core.errors import BenchmarkError
from .base import SPLITS, BenchmarkKind, BenchmarkSpec, Split, Task
from .specs import QA_MAX_STEPS

TASK_TOML = "task.toml"
INSTRUCTION = "instruction.md"
ENVIRONMENT_DIR = "environment"
DOCKERFILE = "Dockerfile"
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
)


class _Table(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class MetadataTable(_Table):
    author_name: str | None = None
    author_email: str | None = None
    difficulty: str | None = None
    category: str | None = None
    tags: list[str] = []


class AgentTable(_Table):
    timeout_sec: float = Field(600.0, gt=0)


class VerifierTable(_Table):
    timeout_sec: float = Field(600.0, gt=0)


class EnvironmentTable(_Table):
    build_timeout_sec: float = Field(600.0, gt=0)
    docker_image: str | None = None
    workdir: str | None = None
    cpus: float | None = Field(None, gt=0)
    memory_mb: int | None = Field(None, gt=0)
    storage_mb: int | None = Field(None, gt=0)
    allow_internet: bool = False


class HarborTaskConfig(_Table):
    """task.toml; each table keeps the fields it does not know (`extra="allow"`)."""

    version: str | None = None
    metadata: MetadataTable = MetadataTable()
    agent: AgentTable = AgentTable()
    verifier: VerifierTable = VerifierTable()
    environment: EnvironmentTable = EnvironmentTable()


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
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
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
    instruction = instruction_path.read_text(encoding="utf-8").strip()
    if not instruction:
        raise BenchmarkError(f"{instruction_path} is empty")
    if not (folder / TESTS_DIR / TEST_SCRIPT).is_file():
        raise BenchmarkError(f"{folder / TESTS_DIR / TEST_SCRIPT} is missing: it is the task's verifier")
    task = HarborTask(folder, config, instruction)
    if not task.has_dockerfile and not config.environment.docker_image:
        raise BenchmarkError(
            f"{task.context / DOCKERFILE} is missing (or set [environment] docker_image in {toml_path})"
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


def harbor_split(
    tasks: list[HarborTask], settings: HarborSettings, sizes: SplitSizes, where: str
) -> dict[Split, list[str]]:
    """The task ids of each split: the explicit lists, or a seeded stratified split."""
    known = {task.id for task in tasks}
    if settings.ids.given:
        split = {name: list(getattr(settings.ids, name)) for name in SPLITS}
        for name, ids in split.items():
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


class HarborSuite:
    """A workdir suite of Harbor task folders, each played in its own container
    (`run/harbor_tasks.py`)."""

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
        self.by_id = {task.id: task for task in map(read_task, task_folders(self.directory))}
        self.split_ids = harbor_split(
            list(self.by_id.values()), self.settings, sizes or SplitSizes(), str(self.directory)
        )
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

    def counts(self) -> dict[Split, int]:
        return {split: len(ids) for split, ids in self.split_ids.items()}

    def prepare(self, splits: tuple[Split, ...]) -> None:
        """Nothing to prepare: images are built when a task first needs one."""

    def setup_digest(self) -> str:
        """Every file of every task folder by path and content, the split and the reward key."""
        if self._digest is None:
            hasher = hashlib.sha256()
            for task in sorted(self.by_id.values(), key=lambda task: task.id):
                for path in sorted(_files(task.folder)):
                    hasher.update(str(path.relative_to(self.directory)).encode() + b"\0")
                    hasher.update(path.read_bytes() + b"\0")
            hasher.update(repr(sorted(self.split_ids.items())).encode())
            hasher.update(repr(self.settings.reward_key).encode())
            self._digest = hasher.hexdigest()[:24]
        return self._digest


def _files(folder: Path) -> list[Path]:
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and not IGNORED.intersection(path.relative_to(folder).parts)
    ]
