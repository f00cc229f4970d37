"""The folder each CLI task runs in, made fresh and removed after: `work/` (its working
directory, or the task-folder suite's own workdir, with the skills copied where the CLI reads
project skills),
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

from ...knowledge.skills import Skill, write_skill_folders


@dataclass(frozen=True)
class TaskFolder:
    root: Path
    workdir: Path
    home: Path
    tmp: Path


@contextmanager
def task_folder(skills: Sequence[Skill], skills_folder: str, workdir: Path | None = None) -> Iterator[TaskFolder]:
    """A fresh folder for one task, removed afterwards whatever happens. `workdir`: the task's
    working directory when the caller made it (a task-folder suite's, with its files copied in);
    the skills copied into it are removed again before the caller scores the work."""
    root = Path(tempfile.mkdtemp(prefix="wikiskill-cli-")).resolve()
    folder = TaskFolder(root, workdir.resolve() if workdir else root / "work", root / "home", root / "tmp")
    skills_dir = folder.workdir / skills_folder
    copied = not skills_dir.exists()  # else the task's own files hold that folder: they stay
    try:
        for path in (folder.workdir, folder.home, folder.tmp):
            path.mkdir(exist_ok=True)
        write_skill_folders(skills, skills_dir)
        yield folder
    finally:
        if copied:
            shutil.rmtree(skills_dir, ignore_errors=True)
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
