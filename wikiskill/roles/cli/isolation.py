"""The folder each CLI task runs in, made fresh and removed after: `work/` (its working
directory, with the task's files and the skills copied where the CLI reads project skills),
`home/` (a private HOME, so the user's settings, credentials, MCP servers and installed skills
are not seen) and `tmp/` (its TMPDIR). The environment is built from nothing: PATH, HOME, TERM,
LANG and TMPDIR, so no variable of the user's (an API key of another provider, a proxy, a
config path) reaches the CLI unless its preset puts it there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...benchmarks import Task
from ...knowledge.skills import Skill


@dataclass(frozen=True)
class TaskFolder:
    root: Path
    workdir: Path
    home: Path
    tmp: Path


def fill_workdir(task: Task, workdir: Path) -> None:
    """Put the task's own files in its fresh workdir, when it comes with any: `task.metadata["files"]`
    is a folder whose contents are copied, or a mapping of relative paths to their text. Suites
    without files (plain QA) leave the workdir empty."""
    files = task.metadata.get("files")
    if isinstance(files, (str, Path)):
        shutil.copytree(files, workdir, dirs_exist_ok=True)
    elif isinstance(files, dict):
        for relative, content in files.items():
            target = workdir / relative
            if not target.resolve().is_relative_to(workdir.resolve()):
                raise ValueError(f"task {task.id}: file {relative!r} lies outside its workdir")
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(str(content), encoding="utf-8")


def copy_skills(skills: Sequence[Skill], folder: Path) -> None:
    """Each skill as an Agent Skills folder, `<folder>/<name>/SKILL.md`: copies, never links, so
    nothing the CLI does reaches the workspace."""
    folder.mkdir(parents=True, exist_ok=True)
    for skill in skills:
        (folder / skill.name).mkdir()
        (folder / skill.name / "SKILL.md").write_text(skill.text, encoding="utf-8")


@contextmanager
def task_folder(task: Task, skills: Sequence[Skill], skills_folder: str) -> Iterator[TaskFolder]:
    """A fresh folder for one task, removed afterwards whatever happens."""
    root = Path(tempfile.mkdtemp(prefix="wikiskill-cli-")).resolve()
    try:
        folder = TaskFolder(root, root / "work", root / "home", root / "tmp")
        for path in (folder.workdir, folder.home, folder.tmp):
            path.mkdir()
        fill_workdir(task, folder.workdir)
        copy_skills(skills, folder.workdir / skills_folder)
        yield folder
    finally:
        shutil.rmtree(root, ignore_errors=True)


def minimal_environment(folder: TaskFolder) -> dict[str, str]:
    """The variables every CLI gets; a preset adds its own (the model's key, its settings)."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(folder.home),
        "TERM": "dumb",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TMPDIR": str(folder.tmp),
    }
