"""A task-folder suite (`tasks:PATH`) written as Harbor task folders, one per task of every split:

    OUT/<task-id>/
        instruction.md          task.md
        task.toml               [metadata] with the task's split, the timeouts and the limits
        environment/Dockerfile  FROM the base image, WORKDIR /app, files/ copied in
        environment/files/      the task's files/
        tests/test.sh           the suite's check, run in /app, its result written as reward.txt
        tests/suite/            what the check needs from the suite's folder (all but the splits)
        tests/task/             the task's own folder without files/ (WIKISKILL_TASK_DIR)

Harbor copies tests/ in only after the agent has finished, so the check and anything beside it
stay hidden until then. A task folder has no reference solution, so no solution/ is written. Only
a suite scored by `scorer: command` exports: its check becomes test.sh; exit 0 scores 1, else a last
stdout line `score: X` scores X, else 0, as `tasks:` scores it on the host.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from ..core.errors import BenchmarkError
from .base import SPLITS, Split
from .task_folders import FILES_DIR, IGNORED, SUITE_FILE, ScorerName, TaskFolders


class SuiteFormat(StrEnum):
    """The formats `wikiskill tasks export` writes a task-folder suite in."""

    HARBOR = "harbor"


WORKDIR = "/app"
TESTS = "/tests"
AGENT_TIMEOUT_SEC = 600.0
"""What task folders do not say: the agent's limit in Harbor (wikiskill's own comes from its settings)."""
ENVIRONMENT = {"build_timeout_sec": 600.0, "cpus": 1, "memory_mb": 2048, "storage_mb": 10240}

TEST_SCRIPT = """#!/bin/bash
# The check of the task-folder suite {suite}, run in the agent's working directory. Exit 0
# scores 1; otherwise a last stdout line `score: X` scores X; else 0.
mkdir -p /logs/verifier
cd {workdir}
WIKISKILL_SUITE_DIR={tests}/suite WIKISKILL_TASK_DIR={tests}/task {command} > /logs/verifier/check.out
status=$?
cat /logs/verifier/check.out
reward=0
if [ "$status" -eq 0 ]; then
    reward=1
else
    last=$(grep -v '^[[:space:]]*$' /logs/verifier/check.out | tail -n 1)
    case "$last" in
        "score: "*) reward=${{last#score: }} ;;
    esac
fi
echo "$reward" > /logs/verifier/reward.txt
"""


@dataclass
class HarborExport:
    out: Path
    tasks: dict[Split, list[str]] = field(default_factory=dict)


def export_harbor(suite_dir: Path, out: Path, base_image: str) -> HarborExport:
    """Write the suite at `suite_dir` as Harbor task folders under `out` (new, or an empty folder);
    nothing is written when the suite is refused."""
    suite = TaskFolders(suite_dir)
    if suite.scoring.scorer != ScorerName.COMMAND:
        raise BenchmarkError(
            f"{suite.directory / SUITE_FILE}: only a suite scored by `scorer: command` exports "
            f"to Harbor (its check becomes tests/test.sh), not scorer: {suite.scoring.scorer}"
        )
    if suite.scoring.junit is not None:
        raise BenchmarkError(
            f"{suite.directory / SUITE_FILE}: junit: partial credit from a JUnit report does not "
            "export to Harbor; drop junit: to export the pass/fail check"
        )
    out = out.expanduser().resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BenchmarkError(f"{out} exists and is not an empty folder: name a new one with --out")
    command = _check_command(suite)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        result = HarborExport(out)
        for split in SPLITS:
            result.tasks[split] = []
            for task in suite.tasks(split):
                _write_task(staging / task.id, suite, split, task.id, command, base_image)
                result.tasks[split].append(task.id)
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return result


def _check_command(suite: TaskFolders) -> str:
    """The check as a shell command line; a program in the suite's folder runs from tests/suite/."""
    words = shlex.split(suite.scoring.command or "")
    if "/" in words[0] and not Path(words[0]).is_absolute():
        words[0] = f"{TESTS}/suite/{Path(os.path.normpath(words[0])).as_posix()}"
    return shlex.join(words)


def _write_task(folder: Path, suite: TaskFolders, split: Split, task_id: str, command: str, base_image: str) -> None:
    source = suite.directory / split / task_id
    environment = folder / "environment"
    environment.mkdir(parents=True)
    (folder / "instruction.md").write_text((source / "task.md").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "task.toml").write_text(_task_toml(suite, split), encoding="utf-8")
    dockerfile = [f"FROM {base_image}", f"WORKDIR {WORKDIR}"]
    if (source / FILES_DIR).is_dir():
        shutil.copytree(source / FILES_DIR, environment / FILES_DIR, ignore=_ignored)
        dockerfile.append(f"COPY {FILES_DIR}/ {WORKDIR}/")
    (environment / "Dockerfile").write_text("\n".join(dockerfile) + "\n", encoding="utf-8")
    tests = folder / "tests"
    tests.mkdir()
    for entry in sorted(suite.directory.iterdir()):
        if entry.name in IGNORED or entry.name in SPLITS:
            continue
        target = tests / "suite" / entry.name
        if entry.is_dir():
            shutil.copytree(entry, target, ignore=_ignored)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(entry, target)
    shutil.copytree(
        source,
        tests / "task",
        ignore=lambda root, names: _ignored(root, names) | ({FILES_DIR} if Path(root) == source else set()),
    )
    script = tests / "test.sh"
    script.write_text(
        TEST_SCRIPT.format(suite=suite.directory.name, workdir=WORKDIR, tests=TESTS, command=command), encoding="utf-8"
    )
    script.chmod(0o755)


def _task_toml(suite: TaskFolders, split: Split) -> str:
    environment = "\n".join(f"{key} = {value}" for key, value in ENVIRONMENT.items())
    name = suite.directory.name
    return (
        f'version = "1.0"\n\n[metadata]\ncategory = {json.dumps(name)}\nwikiskill_split = "{split}"\n'
        f"source = {json.dumps('tasks:' + name)}\n\n[verifier]\ntimeout_sec = {float(suite.scoring.timeout)}\n\n"
        f"[agent]\ntimeout_sec = {AGENT_TIMEOUT_SEC}\n\n[environment]\n{environment}\nallow_internet = false\n"
    )


def _ignored(root: str, names: list[str]) -> set[str]:
    return {name for name in names if name in IGNORED}
