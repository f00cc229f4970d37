"""The workspace repository: the only module that talks to git.

Every harness write is a commit written by one `git fast-import` run and published by one
compare-and-swap ref update; main's working tree is then synced from the commit. A crash can
therefore leave only (a) unreferenced objects, or (b) a published commit whose working-tree sync
is unfinished, which `recover` completes from the marker written before the ref moved.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import git

from ..core.config import CONFIG_FILE
from ..core.errors import WorkspaceError
from ..core.redact import Scrubber, scrub
from ..core.resources import data_dir
from .commits import HARNESS_IDENTITY, build_commit, check_path, parse_message
from .lock import hold_lock
from .reads import MAIN, Commit, WorkspaceReads
from .sync import WorkingTreeSyncs, remove_stale_git_locks, sync_worktree
from .trailers import format_message

STATE_DIR = ".wikiskill"
TEMP_INDEX_PREFIX = "index-"

__all__ = ["MAIN", "Commit", "Workspace", "format_message"]


class Workspace(WorkspaceReads):
    """A wikiskill workspace: a git repository whose branch main is the accepted state.

    The facade over the jobs of the store's other git modules: reading objects and logs (reads),
    writing commit objects (commits), syncing the working tree (sync) and the writer's lock
    (lock); publishing a commit and moving refs happen here.
    """

    def __init__(self, root: Path):
        super().__init__(root)
        self.state_dir = root / STATE_DIR
        self.state_dir.mkdir(exist_ok=True)
        self._syncs = WorkingTreeSyncs(lambda old, new: sync_worktree(self._git_bytes, old, new), self._marker_path())

    # -- creation and discovery -------------------------------------------------------------

    @classmethod
    def create(cls, path: Path, config_text: str) -> Workspace:
        path = path.resolve()
        if (path / CONFIG_FILE).exists():
            raise WorkspaceError(f"{path} is already a wikiskill workspace")
        if path.exists() and any(path.iterdir()):
            raise WorkspaceError(f"{path} is not empty and not a workspace; choose an empty or new directory")
        path.mkdir(parents=True, exist_ok=True)
        shutil.copytree(data_dir("workspace_template"), path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.j2"))
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
        if (here / CONFIG_FILE).is_file():
            raise WorkspaceError(
                f"{here} has a {CONFIG_FILE} but no git repository (.git is missing): a workspace's history "
                "is its git repository; restore .git, or `wikiskill init` a new folder"
            )
        raise WorkspaceError(f"no wikiskill workspace at {here} (run `wikiskill init PATH` or pass -C PATH)")

    def dirty_paths(self, *prefixes: str) -> list[str]:
        """Uncommitted changes (tracked and untracked) under the given files or folders."""
        self.wait_for_sync(*prefixes)
        out = self.repo.git.status(
            "--porcelain",
            "-z",
            "--no-renames",
            "--untracked-files=all",
            "--",
            *prefixes,
            env={"GIT_LITERAL_PATHSPECS": "1"},
        )
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
        scrub_text = Scrubber()
        for path in changes:
            check_path(path, scrub_text)
        message = scrub_text(message)
        parent = self.head(branch)
        build = (parent, changes, message, scrub_text, base, extra_parents)
        if branch != MAIN or not parent:
            sha = build_commit(self, *build)
            touched = None
        elif base in (None, parent):
            # From the tip only the written paths can differ, so git checks them for a person's
            # edits while another git process writes the commit.
            with ThreadPoolExecutor(1) as pool:
                built = pool.submit(build_commit, self, *build)
                touched = list(changes)
                self._refuse_to_overwrite_edits(touched)
                sha = built.result()
        else:
            sha = build_commit(self, *build)
            touched = self.changed_paths(parent, sha)
            self._refuse_to_overwrite_edits(touched)
        self.move_branch(branch, sha, parent, touched)
        parsed = parse_message(message) if parent and (parent, True) in self._logs else None
        if parent and parsed:
            self._keep_log(sha, True, [Commit(sha, (parent, *extra_parents), *parsed), *self._logs[parent, True]])
        return sha

    def _refuse_to_overwrite_edits(self, paths: list[str]) -> None:
        """A commit on main rewrites the working files it changes: refuse while one of them holds
        edits that are not committed (a person's, made during a long run) instead of losing them.

        git status is asked about the folders holding `paths`, then filtered: a few folders are far
        cheaper for it than a thousand literal pathspecs (a rollout's traces).
        """
        wanted = set(paths)
        folders = sorted({path.rpartition("/")[0] or path for path in wanted})
        dirty = [path for path in self.dirty_paths(*folders) if _is_or_under(path, wanted)]
        if dirty:
            raise WorkspaceError(
                f"{dirty[0]} has uncommitted edits that this step would overwrite: commit them "
                "(evolve --commit-human-edits does) or discard them, then run the command again"
            )

    @contextmanager
    def _temp_index(self, base: str | None) -> Iterator[dict[str, str]]:
        """The environment of a private index (holding `base`'s tree) in .wikiskill/."""
        fd, index_path = tempfile.mkstemp(prefix=TEMP_INDEX_PREFIX, dir=self.state_dir)
        os.close(fd)
        os.unlink(index_path)
        env = {"GIT_INDEX_FILE": index_path}
        try:
            if base:
                self.repo.git.read_tree(base, env=env)
            yield env
        finally:
            Path(index_path).unlink(missing_ok=True)

    def move_branch(self, branch: str, new: str, old: str | None, paths: list[str] | None = None) -> None:
        """Compare-and-swap the branch; on main, sync the working tree (resumable via a marker).
        `paths` (None: unknown) are the paths that differ, so dirty checks elsewhere need not wait."""
        if branch != MAIN or old is None:
            self._update_ref(branch, new, old)
            return
        self._check_checkout()
        with self._syncs.publishing(old, new, paths):
            self._update_ref(branch, new, old)

    def _update_ref(self, branch: str, new: str, old: str | None) -> None:
        try:
            self._git_bytes(["update-ref", f"refs/heads/{branch}", new, old or ""])
        except WorkspaceError:
            raise WorkspaceError(
                f"branch {branch} moved while wikiskill was writing it; run the command again"
            ) from None

    def wait_for_sync(self, *paths: str) -> None:
        """Return once the working tree and index hold main's tip at `paths` (all when none given);
        raise if syncing them failed."""
        self._syncs.wait(paths or None)

    def _check_checkout(self) -> None:
        """The working tree must have main checked out: syncing it moves the checked-out branch."""
        try:
            head = self.repo.head.reference.path  # read from .git/HEAD, without a git process
        except TypeError:
            head = "a detached HEAD"
        if head != f"refs/heads/{MAIN}":
            raise WorkspaceError(
                f"the workspace has {head.removeprefix('refs/heads/')} checked out; "
                f"wikiskill writes to {MAIN}: run `git checkout {MAIN}` first"
            )

    def _marker_path(self) -> Path:
        return self.state_dir / "sync.json"

    def recover(self) -> bool:
        """Finish what a killed writer left behind; call it holding the lock, before writing.

        Removes temporary indexes and stale git lock files, and completes an interrupted
        working-tree sync (True when there was one).
        """
        self.wait_for_sync()
        self._check_checkout()
        for leftover in self.state_dir.glob(TEMP_INDEX_PREFIX + "*"):
            leftover.unlink(missing_ok=True)
        remove_stale_git_locks(self.git_dir)
        marker = self._marker_path()
        if not marker.exists():
            return False
        # The marker names the commit being published, but syncs queued before it may be unfinished
        # too, whether or not its own ref moved: the tree must reach main's tip, whatever it is now.
        sync_worktree(self._git_bytes, None, self.resolve(MAIN))
        marker.unlink()
        return True

    def pack_objects(self) -> None:
        """Let git consolidate its packs when there are many (`gc --auto`: nothing below
        gc.autoPackLimit, else a repack in the background), as porcelain commands do after writing."""
        self.repo.git.gc("--auto", "--quiet")

    def tag(self, name: str, sha: str, force: bool = False) -> None:
        self.repo.git.tag(*(["-f"] if force else []), name, sha)

    def create_branch(self, branch: str, start: str) -> None:
        self.repo.git.update_ref(f"refs/heads/{branch}", self.resolve(start), "")

    def delete_branch(self, branch: str) -> None:
        self.repo.git.update_ref("-d", f"refs/heads/{branch}")

    def commit_working_tree(self, paths: list[str], message: str) -> str:
        """Commit the person's own edits under `paths` on main (a `human` or `settings` step).

        Built in a private index and published by compare-and-swap like every harness write;
        secrets are scrubbed from the edited files on disk first, so they never reach git.
        """
        parent = self.head(MAIN)
        for path in self.dirty_paths(*paths):
            _scrub_file(self.root / path)
        with self._temp_index(parent) as env:
            self.repo.git.add("-A", "--", *paths, env=env)
            tree = self.repo.git.write_tree(env=env)
        args = [tree] + (["-p", parent] if parent else [])
        sha = self.git_input(["commit-tree", *args], scrub(message).encode("utf-8"), self._person())
        self.move_branch(MAIN, sha, parent)
        return sha

    def _person(self) -> dict[str, str]:
        """The person's git identity for their own edits; wikiskill's when none is configured."""
        try:
            self.repo.git.var("GIT_AUTHOR_IDENT")
            self.repo.git.var("GIT_COMMITTER_IDENT")
            return {}
        except git.GitCommandError:
            return HARNESS_IDENTITY

    @contextmanager
    def lock(self, command: str) -> Iterator[None]:
        """One writer at a time (see store/lock.py); its working-tree syncs run in the background."""
        with hold_lock(self.state_dir / "lock", command), self._syncs.in_background():
            yield

    @contextmanager
    def writing(self, command: str) -> Iterator[None]:
        """How every command that writes holds the workspace: the lock, then what a killed writer
        left behind finished (`recover`), before anything is read for writing."""
        with self.lock(command):
            self.recover()
            yield


def _is_or_under(path: str, paths: set[str]) -> bool:
    """Whether `path` or a folder on its way is in `paths` (what literal pathspecs would match)."""
    parts = path.split("/")
    return any("/".join(parts[:n]) in paths for n in range(1, len(parts) + 1))


def _scrub_file(path: Path) -> None:
    """Replace secrets in a text file in place (symlinks and binary files are left alone)."""
    if path.is_symlink() or not path.is_file():
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return
    clean = scrub(text)
    if clean != text:
        path.write_text(clean, encoding="utf-8")
