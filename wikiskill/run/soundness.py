"""Sound before spent: before `evolve` spends a model on a Harbor suite, every task that carries
a reference solution is checked as `check-suite` checks it (its solution scores 1, doing nothing
scores 0), once per task digest: the sha256 of every file of its folder, its environment and
tests included, so an edited task is checked again. Verdicts are kept in the state folder
(`soundness.json`). A check that the machinery failed (an image that will not build, a container
that will not start) decides nothing and is not kept: the task stays in, and its runs record
the infrastructure failure as any run does."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..benchmarks.harbor import IGNORED, ContainerSuite, HarborTask
from ..benchmarks.task_folders import CrashRule
from ..store.sync import write_json
from .harbor_tasks import ContainerSetup
from .suite_check import TaskCheck, check_task

VERDICTS_FILE = "soundness.json"


@dataclass(frozen=True)
class Verdict:
    sound: bool
    reason: str
    crash: CrashRule | None = None
    """A task folder's command check: what its crash on the agent's work is (`run/crash_rule.py`)."""
    crash_reason: str = ""


def task_digest(task: HarborTask) -> str:
    """Every file of the task's folder by relative path and content."""
    hasher = hashlib.sha256()
    for path in sorted(task.folder.rglob("*")):
        relative = path.relative_to(task.folder)
        if path.is_file() and not IGNORED.intersection(relative.parts):
            hasher.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()


class Verdicts:
    """The verdicts of earlier checks, by task digest, in the state folder."""

    def __init__(self, state_dir: Path):
        self.path = state_dir / VERDICTS_FILE
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raw = {}
        self._known = {
            digest: Verdict(
                bool(entry["sound"]),
                str(entry["reason"]),
                _rule(entry.get("crash")),
                str(entry.get("crash_reason", "")),
            )
            for digest, entry in (raw.items() if isinstance(raw, dict) else [])
            if isinstance(entry, dict) and {"sound", "reason"} <= entry.keys()
        }

    def get(self, digest: str) -> Verdict | None:
        return self._known.get(digest)

    def put(self, digest: str, verdict: Verdict) -> None:
        self._known[digest] = verdict
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, {key: vars(value) for key, value in sorted(self._known.items())})


def _rule(value: object) -> CrashRule | None:
    return next((rule for rule in CrashRule if rule.value == value), None)


def unsound_tasks(
    suite: ContainerSuite, setup: ContainerSetup, state_dir: Path, concurrency: int = 2
) -> dict[str, str]:
    """Each task of the suite's splits whose reference solution does not score 1 or whose untouched
    folder does not score 0, with the reason; checked tasks are remembered by digest."""
    verdicts = Verdicts(state_dir)
    wanted = sorted({task_id for ids in suite.split_ids.values() for task_id in ids})
    tasks = [suite.by_id[task_id] for task_id in wanted if suite.by_id[task_id].solve_script is not None]
    digests = {task.id: task_digest(task) for task in tasks}
    unknown = [task for task in tasks if verdicts.get(digests[task.id]) is None]
    for check in asyncio.run(_check_all(suite, setup, unknown, concurrency)):
        if check.oracle is not None and check.nop is not None:  # a verdict, not a machine that failed
            verdicts.put(digests[check.task_id], Verdict(check.sound, check.reason))
    found = {task.id: verdicts.get(digests[task.id]) for task in tasks}
    return {task_id: verdict.reason for task_id, verdict in found.items() if verdict is not None and not verdict.sound}


async def _check_all(
    suite: ContainerSuite, setup: ContainerSetup, tasks: list[HarborTask], concurrency: int
) -> list[TaskCheck]:
    gate = asyncio.Semaphore(concurrency)

    async def one(task: HarborTask) -> TaskCheck:
        async with gate:
            return await check_task(suite, setup, task)

    return list(await asyncio.gather(*(one(task) for task in tasks)))
