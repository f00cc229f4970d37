"""The workspace repository: the only module that talks to git.

Every harness write is a commit built in a temporary index and published by one compare-and-swap
ref update; main's working tree is then synced from the commit. A crash can therefore leave only
(a) nothing, or (b) a published commit whose working-tree sync is unfinished, which `recover`
completes from the marker written before the ref moved.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

import git
from gitdb.base import IStream

from .config import CONFIG_FILE
from .errors import WorkspaceError
from .redact import scrub
from .resources import data_dir

MAIN = "main"
STATE_DIR = ".wikiskill"
TRAILER_PREFIX = "Wikiskill-"
HARNESS_IDENTITY = {
    "GIT_AUTHOR_NAME": "wikiskill",
    "GIT_AUTHOR_EMAIL": "wikiskill@localhost",
    "GIT_COMMITTER_NAME": "wikiskill",
    "GIT_COMMITTER_EMAIL": "wikiskill@localhost",
}


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    subject: str
    trailers: dict[str, str] = field(default_factory=dict)

    def trailer(self, key: str) -> str | None:
        return self.trailers.get(TRAILER_PREFIX + key)


def format_message(subject: str, trailers: dict[str, object], body: str = "") -> str:
    lines = [subject.strip().splitlines()[0] if subject.strip() else "wikiskill", ""]
    if body.strip():
        lines += [body.strip(), ""]
    lines += [f"{TRAILER_PREFIX}{key}: {value}" for key, value in trailers.items() if value is not None]
    return "\n".join(lines) + "\n"


class Workspace:
    """A wikiskill workspace: a git repository whose branch main is the accepted state."""

    def __init__(self, root: Path):
        self.root = root
        self.repo = git.Repo(root)
        self.state_dir = root / STATE_DIR
        self.state_dir.mkdir(exist_ok=True)

    # -- creation and discovery -------------------------------------------------------------

    @classmethod
    def create(cls, path: Path, config_text: str) -> Workspace:
        path = path.resolve()
        if (path / CONFIG_FILE).exists():
            raise WorkspaceError(f"{path} is already a wikiskill workspace")
        if path.exists() and any(path.iterdir()):
            raise WorkspaceError(f"{path} is not empty and not a workspace; choose an empty or new directory")
        path.mkdir(parents=True, exist_ok=True)
        shutil.copytree(
            data_dir("workspace_template"), path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.j2")
        )
        (path / CONFIG_FILE).write_text(config_text, encoding="utf-8")
        repo = git.Repo.init(path, initial_branch=MAIN)
        repo.git.add("-A")
        repo.git.commit("-q", "-m", "wikiskill init: empty wiki and skills", env=HARNESS_IDENTITY)
        return cls(path)

    @classmethod
    def open(cls, start: Path | None = None) -> Workspace:
        """The workspace at `start` or the nearest parent that holds wikiskill.yaml."""
        here = (start or Path.cwd()).resolve()
        for candidate in (here, *here.parents):
            if (candidate / CONFIG_FILE).is_file() and (candidate / ".git").exists():
                return cls(candidate)
        raise WorkspaceError(f"no wikiskill workspace at {here} (run `wikiskill init PATH` or pass -C PATH)")

    # -- reading ------------------------------------------------------------------------------

    def head(self, branch: str = MAIN) -> str | None:
        try:
            return self.repo.git.rev_parse("--verify", "-q", f"refs/heads/{branch}^{{commit}}")
        except git.GitCommandError:
            return None

    def resolve(self, ref: str) -> str:
        try:
            return self.repo.git.rev_parse("--verify", "-q", f"{ref}^{{commit}}")
        except git.GitCommandError as exc:
            raise WorkspaceError(f"unknown git ref {ref!r}") from exc

    def tree_id(self, ref: str, path: str) -> str:
        """The git tree id of `path` at `ref` (the empty tree's id when absent)."""
        try:
            return self.repo.git.rev_parse("--verify", "-q", f"{ref}:{path}")
        except git.GitCommandError:
            return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

    def read_files(self, ref: str, prefix: str) -> dict[str, str]:
        """`{path relative to prefix: text}` of every blob under `prefix` at `ref`."""
        try:
            tree = self.repo.commit(ref).tree / prefix.rstrip("/")
        except (KeyError, ValueError, git.BadName) as exc:
            if isinstance(exc, git.BadName):
                raise WorkspaceError(f"unknown git ref {ref!r}") from exc
            return {}
        files = {}
        for item in tree.traverse():
            if item.type == "blob":
                files[item.path[len(tree.path) + 1:]] = item.data_stream.read().decode("utf-8", "replace")
        return files

    def body(self, sha: str) -> str:
        """A commit message's body without its subject and trailer block."""
        body = self.repo.git.show("-s", "--format=%b", sha).strip()
        paragraphs = body.split("\n\n")
        if paragraphs and all(line.startswith(TRAILER_PREFIX) for line in paragraphs[-1].splitlines()):
            paragraphs = paragraphs[:-1]
        return "\n\n".join(paragraphs).strip()

    def list_paths(self, ref: str, prefix: str) -> list[str]:
        """Paths of every file under `prefix` at `ref` (symlinks included as entries)."""
        try:
            out = self.repo.git.ls_tree("-r", "--name-only", "-z", ref, "--", prefix)
        except git.GitCommandError:
            return []
        return [path for path in out.split("\0") if path]

    def read_file(self, ref: str, path: str) -> str | None:
        try:
            return self.repo.git.show(f"{ref}:{path}")
        except git.GitCommandError:
            return None

    def log(self, ref: str = MAIN, first_parent: bool = True) -> list[Commit]:
        """Commits of `ref`, newest first, with their Wikiskill trailers."""
        args = ["--first-parent"] if first_parent else []
        fmt = "%H%x1f%P%x1f%s%x1f%(trailers:only,unfold)%x1e"
        try:
            out = self.repo.git.log(*args, f"--format={fmt}", ref)
        except git.GitCommandError:
            return []
        commits = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, parents, subject, trailer_text = record.split("\x1f")
            trailers = {}
            for line in trailer_text.splitlines():
                key, _, value = line.partition(":")
                if key.startswith(TRAILER_PREFIX):
                    trailers[key.strip()] = value.strip()
            commits.append(Commit(sha, tuple(parents.split()), subject, trailers))
        return commits

    def refs(self, prefix: str) -> dict[str, str]:
        """`{short name: commit sha}` of branches or tags under a full ref prefix."""
        out = self.repo.git.for_each_ref("--format=%(refname)%00%(objectname)", prefix)
        strip = len("refs/heads/") if prefix.startswith("refs/heads/") else len("refs/tags/")
        return {name[strip:]: sha for name, sha in (line.split("\0") for line in out.splitlines() if line)}

    def changed_paths(self, old: str, new: str, prefix: str | None = None) -> list[str]:
        args = ["--name-only", "--no-renames", old, new] + (["--", prefix] if prefix else [])
        return [line for line in self.repo.git.diff(*args).splitlines() if line]

    def diff(self, old: str, new: str, prefix: str) -> str:
        return self.repo.git.diff("--no-renames", "--no-color", old, new, "--", prefix)

    def dirty_paths(self, *prefixes: str) -> list[str]:
        """Uncommitted changes (tracked and untracked) under the given folders."""
        out = self.repo.git.status("--porcelain", "-z", "--untracked-files=all", "--", *prefixes)
        return [entry[3:] for entry in out.split("\0") if len(entry) > 3]

    # -- writing ------------------------------------------------------------------------------

    def commit(
        self,
        changes: dict[str, str | None],
        message: str,
        branch: str = MAIN,
        base: str | None = None,
        extra_parents: tuple[str, ...] = (),
    ) -> str:
        """Publish one commit on `branch`: `changes` maps paths to new text (None deletes).

        The tree starts from `base` (a tree-ish; default: the branch tip). With `extra_parents`
        it becomes a merge commit.
        """
        parent = self.head(branch)
        tree = self._write_tree(base or parent, changes)
        parents = [p for p in (parent, *extra_parents) if p]
        args = [tree] + [arg for p in parents for arg in ("-p", p)]
        sha = self._git_input(["commit-tree", *args], scrub(message).encode("utf-8"), HARNESS_IDENTITY)
        self.move_branch(branch, sha, parent)
        return sha

    def _write_tree(self, base: str | None, changes: dict[str, str | None]) -> str:
        for path in changes:
            if path.startswith("/") or ".." in Path(path).parts or path.startswith(".git"):
                raise WorkspaceError(f"refusing to write outside the workspace: {path!r}")
        fd, index_path = tempfile.mkstemp(prefix="index-", dir=self.state_dir)
        os.close(fd)
        os.unlink(index_path)
        env = {"GIT_INDEX_FILE": index_path}
        try:
            if base:
                self.repo.git.read_tree(base, env=env)
            lines = []
            for path, text in sorted(changes.items()):
                if text is None:
                    lines.append(f"0 {'0' * 40}\t{path}")
                else:
                    data = scrub(text).encode("utf-8")
                    blob = self.repo.odb.store(IStream("blob", len(data), BytesIO(data))).hexsha.decode()
                    lines.append(f"100644 {blob}\t{path}")
            if lines:
                self._git_input(["update-index", "--index-info"], ("\n".join(lines) + "\n").encode(), env)
            return self.repo.git.write_tree(env=env)
        finally:
            Path(index_path).unlink(missing_ok=True)

    def _git_input(self, args: list[str], data: bytes, env: dict[str, str] | None = None) -> str:
        """Run git with `data` on stdin (GitPython's istream needs a real file)."""
        done = subprocess.run(["git", *args], input=data, cwd=self.root, capture_output=True,
                              env={**os.environ, **(env or {})})
        if done.returncode != 0:
            raise WorkspaceError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()[:300]}")
        return done.stdout.decode("utf-8", "replace").strip()

    def move_branch(self, branch: str, new: str, old: str | None) -> None:
        """Compare-and-swap the branch; on main, sync the working tree (resumable via a marker)."""
        checked_out = branch == MAIN
        if checked_out and old:
            self._write_marker({"old": old, "new": new})
        self.repo.git.update_ref(f"refs/heads/{branch}", new, old or "")
        if checked_out and old:
            self._sync_worktree(old, new)
            self._marker_path().unlink(missing_ok=True)

    def _marker_path(self) -> Path:
        return self.state_dir / "sync.json"

    def _write_marker(self, data: dict) -> None:
        tmp = self._marker_path().with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self._marker_path())

    def _sync_worktree(self, old: str, new: str) -> None:
        """Make the index and the files that differ between two commits match `new`."""
        (self.root / ".git" / "index.lock").unlink(missing_ok=True)
        paths = self.changed_paths(old, new)
        self.repo.git.reset("-q", new)
        present = set(self.repo.git.ls_tree("-r", "--name-only", new, "--", *paths).splitlines()) if paths else set()
        for path in paths:
            if path not in present:
                target = self.root / path
                target.unlink(missing_ok=True)
                _remove_empty_parents(target.parent, self.root)
        if present:
            data = "\0".join(sorted(present)) + "\0"
            self._git_input(["checkout-index", "-f", "-z", "--stdin"], data.encode("utf-8"))

    def recover(self) -> bool:
        """Finish a working-tree sync that a crash interrupted. True when there was one."""
        marker = self._marker_path()
        if not marker.exists():
            return False
        data = json.loads(marker.read_text(encoding="utf-8"))
        if self.head() == data["new"]:
            self._sync_worktree(data["old"], data["new"])
        marker.unlink()
        return True

    def tag(self, name: str, sha: str, force: bool = False) -> None:
        self.repo.git.tag(*(["-f"] if force else []), name, sha)

    def create_branch(self, branch: str, start: str) -> None:
        self.repo.git.update_ref(f"refs/heads/{branch}", self.resolve(start), "")

    def delete_branch(self, branch: str) -> None:
        self.repo.git.update_ref("-d", f"refs/heads/{branch}")

    def merged_tree(self, ours: str, theirs: str, merge_base: str | None = None) -> str:
        """A three-way merge computed without touching the working tree; raises on conflicts."""
        args = ["--write-tree", "--no-messages"] + ([f"--merge-base={merge_base}"] if merge_base else [])
        try:
            return self.repo.git.merge_tree(*args, ours, theirs).splitlines()[0]
        except git.GitCommandError as exc:
            raise WorkspaceError(f"cannot combine {ours[:8]} with {theirs[:8]}: conflicting changes") from exc

    def commit_working_tree(self, paths: list[str], message: str) -> str:
        """Commit the person's own edits under `paths` (used for `human` steps)."""
        self.repo.git.add("-A", "--", *paths)
        self._git_input(["commit", "-q", "--allow-empty", "-F", "-"], scrub(message).encode("utf-8"))
        return self.repo.head.commit.hexsha

    @contextmanager
    def lock(self, command: str) -> Iterator[None]:
        """One writer at a time. The kernel drops the lock when its process dies."""
        path = self.state_dir / "lock"
        handle = open(path, "a+", encoding="utf-8")
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise WorkspaceError(f"workspace is busy: {holder} holds its lock; wait for it or stop it") from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} ({command})")
            handle.flush()
            yield
        finally:
            handle.close()


def _remove_empty_parents(directory: Path, root: Path) -> None:
    while directory != root and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent
