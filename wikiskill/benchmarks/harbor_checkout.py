"""A git repository of someone else's checked out at one commit into a cache folder: a Harbor
registry's task repositories. The clone is made beside its place and moved in whole, so a
killed clone leaves nothing that looks finished; one already there is used as it is."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from git import GitCommandError, Repo

from ..core.errors import BenchmarkError


def checkout(url: str, commit: str | None, dest: Path) -> Path:
    """`dest`, holding `url`'s files at `commit` (None: its default branch's head)."""
    if dest.is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = dest.with_name(f"{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        repo = Repo.clone_from(url, scratch, no_checkout=True)
        repo.git.checkout("--detach", commit or "HEAD")
        repo.close()
    except GitCommandError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        said = " ".join((exc.stderr or str(exc)).split()).removeprefix("stderr: ")
        raise BenchmarkError(f"cannot check out {url} at {commit or 'its head'}: {said.strip(chr(39))}") from None
    try:
        os.rename(scratch, dest)
    except OSError:  # another process finished the same checkout first
        shutil.rmtree(scratch, ignore_errors=True)
    return dest
