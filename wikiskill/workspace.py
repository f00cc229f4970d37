"""The workspace repository: the only module that talks to git.

Every harness write is a commit written by one `git fast-import` run and published by one
compare-and-swap ref update; main's working tree is then synced from the commit. A crash can
therefore leave only (a) unreferenced objects, or (b) a published commit whose working-tree sync
is unfinished, which `recover` completes from the marker written before the ref moved.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import git

from .config import CONFIG_FILE
from .errors import WorkspaceError
from .redact import Scrubber, scrub
from .resources import data_dir

MAIN = "main"
STATE_DIR = ".wikiskill"
TEMP_INDEX_PREFIX = "index-"
SCRATCH_REF = "refs/wikiskill/staging"  # named in fast-import's stream only; never left in the repository
STALE_LOCK_SECONDS = 1.0
READS_KEPT = 8  # trees and logs kept in memory by id
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
        self._syncs = _WorkingTreeSyncs(self._sync_worktree, self._marker_path())
        self._trees: OrderedDict[str, list[tuple[str, str, bytes]]] = OrderedDict()  # tree id -> its blobs
        self._logs: OrderedDict[tuple[str, bool], list[Commit]] = OrderedDict()  # (tip, first parent) -> log

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
        return self._object_id(f"refs/heads/{branch}^{{commit}}")

    def resolve(self, ref: str) -> str:
        sha = self._object_id(f"{ref}^{{commit}}")
        if sha is None:
            raise WorkspaceError(f"unknown git ref {ref!r}")
        return sha

    def tree_id(self, ref: str, path: str) -> str:
        """The git tree id of `path` at `ref` (the empty tree's id when absent)."""
        return self._object_id(f"{ref}:{path}") or "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

    def _object_id(self, name: str) -> str | None:
        """The id of the object `name` (`main`, `main:wiki/index.md`, ...), None when there is none."""
        found = self._ask_cat_file(self.repo.git.get_object_header, name)
        return found[0].decode() if found else None

    def _object_bytes(self, name: str) -> bytes | None:
        """The content of the object `name`, None when there is none."""
        found = self._ask_cat_file(self.repo.git.get_object_data, name)
        return found[3] if found else None

    def _ask_cat_file(self, ask: Callable[[str], tuple], name: str) -> tuple | None:
        """`ask(name)`: one of GitPython's calls to its long-running `git cat-file --batch[-check]`,
        ~20 times cheaper than a git process; None when `name` names no object. That protocol is a
        name per line, so a name holding a line break is first resolved to an id by `rev-parse`."""
        if "\n" in name or "\r" in name:
            try:
                name = self.repo.git.rev_parse("--verify", "-q", "--end-of-options", name)
            except git.GitCommandError:
                return None
        try:
            return ask(name)
        except ValueError:  # git answered "<name> missing"
            return None

    def read_files(self, ref: str, prefix: str) -> dict[str, str]:
        """`{path relative to prefix: text}` of every blob under `prefix` at `ref`."""
        return {path: data.decode("utf-8", "replace") for path, _, data in self._blobs_under(ref, prefix)}

    def _blobs_under(self, ref: str, prefix: str) -> list[tuple[str, str, bytes]]:
        """`(path relative to prefix, mode, bytes)` of every blob under `prefix` at `ref`, read by
        one `ls-tree` and one `cat-file --batch` rather than a round trip per blob. A tree never
        changes, so the last few read are kept by id: the steps of a round read the same skills."""
        tree = self._object_id(f"{ref}^{{commit}}:{prefix.rstrip('/')}")
        if tree is None:
            self.resolve(ref)  # raises when `ref` is unknown
            return []  # there is no such folder at `ref`
        if tree not in self._trees:
            self._trees[tree] = self._read_tree_blobs(tree)
            if len(self._trees) > READS_KEPT:
                self._trees.popitem(last=False)
        self._trees.move_to_end(tree)
        return self._trees[tree]

    def _read_tree_blobs(self, tree: str) -> list[tuple[str, str, bytes]]:
        listing = self._git_bytes(["ls-tree", "-r", "-z", tree])
        entries = []
        for record in filter(None, listing.split(b"\0")):
            meta, _, path = record.partition(b"\t")
            mode, kind, sha = meta.decode().split(" ")
            if kind == "blob":
                entries.append((path.decode("utf-8", "surrogateescape"), mode, sha))
        if not entries:
            return []
        requests = "".join(f"{sha}\n" for *_, sha in entries).encode()
        contents = _batch_contents(self._git_bytes(["cat-file", "--batch"], requests))
        return [(path, mode, data) for (path, mode, _), data in zip(entries, contents, strict=True)]

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
        data = self._object_bytes(f"{ref}:{path}")
        return data.decode("utf-8", "replace") if data is not None else None

    def is_symlink(self, ref: str, path: str) -> bool:
        """Whether `path` at `ref` is a committed symbolic link (its blob is the link's target)."""
        try:
            return self.repo.git.ls_tree(ref, "--", path).startswith("120000 ")
        except git.GitCommandError:
            return False

    def log(self, ref: str = MAIN, first_parent: bool = True) -> list[Commit]:
        """Commits of `ref`, newest first, with their Wikiskill trailers. A commit's history never
        changes, so the last few logs are kept by tip, and a commit made here extends its parent's."""
        tip = None if ref.startswith("-") else self._object_id(f"{ref}^{{commit}}")
        if tip is not None and (tip, first_parent) in self._logs:
            self._logs.move_to_end((tip, first_parent))
            return list(self._logs[tip, first_parent])
        commits = self._read_log(ref, first_parent)
        if tip is not None:
            self._keep_log(tip, first_parent, commits)
        return commits

    def _keep_log(self, tip: str, first_parent: bool, commits: list[Commit]) -> None:
        self._logs[tip, first_parent] = commits
        if len(self._logs) > READS_KEPT:
            self._logs.popitem(last=False)

    def _read_log(self, ref: str, first_parent: bool) -> list[Commit]:
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
        """Paths that differ between two commits or trees (-z: raw names, no quoting)."""
        args = ["--name-only", "--no-renames", "-z", old, new] + (["--", prefix] if prefix else [])
        return [path for path in self.repo.git.diff(*args).split("\0") if path]

    def diff(self, old: str, new: str, prefix: str) -> str:
        return self.repo.git.diff("--no-renames", "--no-color", old, new, "--", prefix)

    def dirty_paths(self, *prefixes: str) -> list[str]:
        """Uncommitted changes (tracked and untracked) under the given files or folders."""
        self.wait_for_sync(*prefixes)
        out = self.repo.git.status("--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", *prefixes,
                                   env={"GIT_LITERAL_PATHSPECS": "1"})
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
            _check_path(path, scrub_text)
        message = scrub_text(message)
        parent = self.head(branch)
        build = (parent, changes, message, scrub_text, base, extra_parents)
        if branch != MAIN or not parent:
            sha = self._build_commit(*build)
            touched = None
        elif base in (None, parent):
            # From the tip only the written paths can differ, so git checks them for a person's
            # edits while another git process writes the commit.
            with ThreadPoolExecutor(1) as pool:
                built = pool.submit(self._build_commit, *build)
                touched = list(changes)
                self._refuse_to_overwrite_edits(touched)
                sha = built.result()
        else:
            sha = self._build_commit(*build)
            touched = self.changed_paths(parent, sha)
            self._refuse_to_overwrite_edits(touched)
        self.move_branch(branch, sha, parent, touched)
        parsed = _parse_message(message) if (parent, True) in self._logs else None
        if parsed:
            self._keep_log(sha, True, [Commit(sha, (parent, *extra_parents), *parsed), *self._logs[parent, True]])
        return sha

    def _build_commit(self, parent: str | None, changes: dict[str, str | None], message: str,
                      scrub_text: Scrubber, base: str | None = None, extra_parents: tuple[str, ...] = ()) -> str:
        """Store the blobs (scrubbed), trees and commit object in one `git fast-import` run and
        return the commit's id without moving any ref (its scratch branch is reset away before it
        ends). One process instead of a temporary index and five plumbing commands: most of a
        step's git time, and its cost follows the number of changed paths, not the history's size."""
        now = f"{int(time.time())} {_utc_offset()}"
        identity = f"{HARNESS_IDENTITY['GIT_AUTHOR_NAME']} <{HARNESS_IDENTITY['GIT_AUTHOR_EMAIL']}> {now}"
        text = message.encode("utf-8")
        stream = [b"commit %s\nmark :1\nauthor %s\ncommitter %s\ndata %d\n%s\n"
                  % (SCRATCH_REF.encode(), identity.encode(), identity.encode(), len(text), text)]
        if parent:
            stream.append(b"from %s\n" % parent.encode())
        stream += [b"merge %s\n" % extra.encode() for extra in extra_parents]
        if base not in (None, parent):
            tree = self._object_id(f"{base}^{{tree}}")
            if tree is None:
                raise WorkspaceError(f"unknown git tree {base!r}")
            stream.append(b'M 040000 %s ""\n' % tree.encode())
        for path in sorted(changes):
            quoted = _quote_path(path)
            if changes[path] is None:
                stream.append(b"D %s\n" % quoted)
            else:
                data = scrub_text(changes[path]).encode("utf-8")
                stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (quoted, len(data), data))
        stream.append(b"\nget-mark :1\nreset %s\n\ndone\n" % SCRATCH_REF.encode())
        # Kept as a small pack: unpacking it into loose objects cost another git process (~6 ms a
        # commit); `pack_objects` folds the packs together between rounds.
        return self._git_input(["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--done"],
                               b"".join(stream))

    def _refuse_to_overwrite_edits(self, paths: list[str]) -> None:
        """A commit on main rewrites the working files it changes: refuse while one of them holds
        edits that are not committed (a person's, made during a long run) instead of losing them.

        git status is asked about the folders holding `paths`, then filtered: a thousand literal
        pathspecs (a rollout's traces) cost it ~50 ms, a few folders ~3 ms.
        """
        wanted = set(paths)
        folders = sorted({path.rpartition("/")[0] or path for path in wanted})
        dirty = [path for path in self.dirty_paths(*folders) if _is_or_under(path, wanted)]
        if dirty:
            raise WorkspaceError(f"{dirty[0]} has uncommitted edits that this step would overwrite: commit them "
                                 "(evolve --commit-human-edits does) or discard them, then run the command again")

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

    def _git_input(self, args: list[str], data: bytes, env: dict[str, str] | None = None) -> str:
        """Run git with `data` on stdin (GitPython's istream needs a real file); its output as text."""
        return self._git_bytes(args, data, env).decode("utf-8", "replace").strip()

    def _git_bytes(self, args: list[str], data: bytes = b"", env: dict[str, str] | None = None) -> bytes:
        """Run git with `data` on stdin; its output byte for byte."""
        done = subprocess.run(["git", *args], input=data, cwd=self.root, capture_output=True, check=False,
                              env={**os.environ, **(env or {})})
        if done.returncode != 0:
            raise WorkspaceError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()[:300]}")
        return done.stdout

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
            raise WorkspaceError(f"branch {branch} moved while wikiskill was writing it; run the command again") from None

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
            raise WorkspaceError(f"the workspace has {head.removeprefix('refs/heads/')} checked out; "
                                 f"wikiskill writes to {MAIN}: run `git checkout {MAIN}` first")

    def _marker_path(self) -> Path:
        return self.state_dir / "sync.json"

    def _sync_worktree(self, old: str | None, new: str, attempts: int = 20) -> None:
        """Make the index and the working files match `new`, by git's own checkout: from `old`,
        only the files that differ between the two commits are touched (unchanged ones keep their
        index entries and stat data); without it, every file is compared, so whatever state a
        killed run left is repaired. Git never writes or deletes through a symlinked folder.
        Waits a little while another git command holds the index; unlike `git reset` it locks no ref."""
        trees = [old, new] if old else [new]
        for attempt in range(attempts):
            try:
                self._git_bytes(["read-tree", "--reset", "-u", *trees])
                return
            except WorkspaceError as exc:
                if "index.lock" not in str(exc) or attempt == attempts - 1:
                    raise WorkspaceError(f"cannot update the working tree: {exc}") from None
                time.sleep(0.1)

    def recover(self) -> bool:
        """Finish what a killed writer left behind; call it holding the lock, before writing.

        Removes temporary indexes and stale git lock files, and completes an interrupted
        working-tree sync (True when there was one).
        """
        self.wait_for_sync()
        self._check_checkout()
        for leftover in self.state_dir.glob(TEMP_INDEX_PREFIX + "*"):
            leftover.unlink(missing_ok=True)
        self._remove_stale_git_locks()
        marker = self._marker_path()
        if not marker.exists():
            return False
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
        except ValueError:
            data = {}  # written by replace, so only a hand edit can break it
        if data.get("new") and self.head() == data["new"]:
            self._sync_worktree(None, data["new"])
        marker.unlink()
        return True

    def _remove_stale_git_locks(self) -> None:
        """Delete the lock files of git commands killed with wikiskill (index, HEAD, refs).

        A live git command holds its lock for milliseconds, so a lock older than
        STALE_LOCK_SECONDS is a dead one's; younger ones are given that long first.
        """
        git_dir = Path(self.repo.git_dir)
        candidates = [git_dir / name for name in ("index.lock", "HEAD.lock", "packed-refs.lock")]
        for lock in candidates + sorted((git_dir / "refs").rglob("*.lock")):
            try:
                age = time.time() - lock.stat().st_mtime
            except FileNotFoundError:
                continue
            time.sleep(max(0.0, STALE_LOCK_SECONDS - age))
            lock.unlink(missing_ok=True)

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

    def tree_after(self, base: str, changes: dict[str, str | None], path: str) -> str:
        """The id of `path`'s tree once `changes` are applied to the tree-ish `base`; nothing is
        published (the commit object built for it is unreferenced)."""
        return self.tree_id(self._build_commit(None, changes, "scratch\n", Scrubber(), base), path)

    def merged_tree(self, ours: str, theirs: str) -> str:
        """A three-way merge computed without touching the working tree; raises on conflicts."""
        try:
            return self.repo.git.merge_tree("--write-tree", "--no-messages", ours, theirs).splitlines()[0]
        except git.GitCommandError as exc:
            raise WorkspaceError(f"cannot combine {ours[:8]} with {theirs[:8]}: conflicting changes") from exc

    def commit_working_tree(self, paths: list[str], message: str) -> str:
        """Commit the person's own edits under `paths` on main (a `human` step).

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
        sha = self._git_input(["commit-tree", *args], scrub(message).encode("utf-8"), self._person())
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
            with self._syncs.in_background():
                yield
        finally:
            handle.close()

    # -- hosts, export and watch ----------------------------------------------------------

    @property
    def git_dir(self) -> Path:
        """The repository's git directory (where refs live), for file-system watchers."""
        return Path(self.repo.git_dir)

    def blobs(self, ref: str, prefix: str) -> dict[str, tuple[bytes, bool]]:
        """`{path relative to prefix: (bytes, executable)}` of every regular file under `prefix`
        at `ref`, byte for byte; symlinks and submodules are left out."""
        return {path: (data, mode == "100755") for path, mode, data in self._blobs_under(ref, prefix)
                if mode in ("100644", "100755")}

    def touching_commits(self, ref: str, prefix: str) -> list[tuple[Commit, list[str]]]:
        """Commits on `ref`'s first-parent line that changed files under `prefix`, newest first,
        each with those paths. A merge counts with its diff to its first parent, so an accepted
        gate merge appears with its trailers (decision, round) rather than the branch commits."""
        out = self.repo.git.log("--first-parent", "--diff-merges=first-parent", "--name-only",
                                "--format=%x1e%H", ref, "--", prefix)
        paths_by_sha: dict[str, list[str]] = {}
        for record in out.split("\x1e"):
            lines = [line for line in record.splitlines() if line]
            if lines:
                paths_by_sha[lines[0]] = lines[1:]
        return [(commit, paths_by_sha[commit.sha]) for commit in self.log(ref) if commit.sha in paths_by_sha]


class _WorkingTreeSyncs:
    """Brings main's working tree up to each commit published on main, in order.

    In the foreground (the default) each sync runs before `publishing` returns. Inside
    `in_background()` (a writer holding the workspace lock) they run one after another on a
    thread while the harness goes on to its next step; `wait(paths)` blocks only while a pending
    sync touches `paths`. The marker file names the tip the tree must reach from the moment before
    a ref moves until every sync is done, so `recover` can finish the job after a kill.
    """

    def __init__(self, sync: Callable[[str | None, str], None], marker: Path):
        self._sync = sync
        self._marker = marker
        self._background = False
        self._publishing = False
        self._jobs: list[tuple[str, str, frozenset[str] | None]] = []  # (old, new, changed paths or None)
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()

    @contextmanager
    def publishing(self, old: str, new: str, paths: list[str] | None) -> Iterator[None]:
        """Around the ref update that moves main from `old` to `new`; syncs (or queues) after it."""
        self.wait_for_errors()
        with self._changed:
            self._publishing = True  # the marker now names `new`: the worker must not remove it
            _write_json(self._marker, {"new": new})
        try:
            yield
        except BaseException:
            with self._changed:
                self._publishing = False
                if self._jobs:
                    _write_json(self._marker, {"new": self._jobs[-1][1]})
                else:
                    self._marker.unlink(missing_ok=True)
            raise
        if not self._background:
            self._publishing = False
            self._sync(old, new)
            self._marker.unlink(missing_ok=True)
            return
        with self._changed:
            self._publishing = False
            self._jobs.append((old, new, None if paths is None else frozenset(paths)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="wikiskill-sync")
                self._thread.start()

    def _work(self) -> None:
        while True:
            with self._changed:
                if not self._jobs:
                    self._thread = None
                    return
                old, new, _ = self._jobs[0]
            try:
                self._sync(old, new)
            except Exception as exc:  # noqa: BLE001 - raised to the writer by wait(); the marker stays
                with self._changed:
                    self._error, self._jobs, self._thread = exc, [], None
                    self._changed.notify_all()
                return
            with self._changed:
                self._jobs.pop(0)
                if not self._jobs and not self._publishing:
                    self._marker.unlink(missing_ok=True)
                self._changed.notify_all()

    def wait(self, paths: tuple[str, ...] | None = None) -> None:
        """Block while a pending sync touches `paths` (None: any); raise a sync's failure."""
        with self._changed:
            self._changed.wait_for(lambda: not any(_touches(job[2], paths) for job in self._jobs))
        self.wait_for_errors()

    def wait_for_errors(self) -> None:
        with self._changed:
            error, self._error = self._error, None
        if error is not None:
            raise error

    @contextmanager
    def in_background(self) -> Iterator[None]:
        """Syncs run on a thread inside this block; all of them are done when it ends. When the
        block raises, that error is the one reported: a failed sync has left its marker."""
        self._background = True
        try:
            yield
        except BaseException:
            self._background = False
            with self._changed:
                self._changed.wait_for(lambda: not self._jobs)
                self._error = None
            raise
        self._background = False
        self.wait()


def _touches(changed: frozenset[str] | None, paths: tuple[str, ...] | None) -> bool:
    """Whether a sync that changes `changed` (None: unknown) can touch a file under `paths`."""
    if changed is None or paths is None:
        return True
    return any(a == b or a.startswith(b + "/") or b.startswith(a + "/") for a in changed for b in paths)


def _write_json(path: Path, data: dict) -> None:
    """Replace `path` with `data` atomically."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def _is_or_under(path: str, paths: set[str]) -> bool:
    """Whether `path` or a folder on its way is in `paths` (what literal pathspecs would match)."""
    parts = path.split("/")
    return any("/".join(parts[:n]) in paths for n in range(1, len(parts) + 1))


def _check_path(path: str, scrub_text: Scrubber) -> None:
    """Harness writes stay inside the workspace and out of .git, and carry no secret in the name."""
    parts = path.split("/")
    if (not path or path.startswith("/") or "\0" in path or any(p in ("", ".", "..") for p in parts)
            or any(p.lower() == ".git" for p in parts)):
        raise WorkspaceError(f"refusing to write outside the workspace: {path[:200]!r}")
    if scrub_text(path) != path:
        raise WorkspaceError("refusing to write a file whose name contains a secret")


def _parse_message(message: str) -> tuple[str, dict[str, str]] | None:
    """The subject and trailers of a message shaped by `format_message` (a subject line, and a
    last paragraph of Wikiskill trailers), as `log` reads them back from git; None for any other."""
    paragraphs = message.strip().split("\n\n")
    last = paragraphs[-1].splitlines()
    if len(paragraphs) < 2 or "\n" in paragraphs[0] or not all(line.startswith(TRAILER_PREFIX) for line in last):
        return None
    trailers = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in last)}
    return paragraphs[0].strip(), trailers


def _quote_path(path: str) -> bytes:
    """A path as fast-import reads it: C-style quoted, so spaces, quotes and line breaks survive."""
    escaped = "".join({"\\": "\\\\", '"': '\\"', "\n": "\\n"}.get(c, c) if c >= " " or c == "\n"
                      else f"\\{ord(c):03o}" for c in path)
    return f'"{escaped}"'.encode("utf-8", "surrogateescape")


def _utc_offset() -> str:
    """This machine's offset from UTC as git writes it (+0100), like `git commit-tree` does."""
    minutes = round(time.localtime().tm_gmtoff / 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


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


def _batch_contents(out: bytes) -> list[bytes]:
    """The objects' contents in the output of `git cat-file --batch` ("<id> <type> <size>" lines)."""
    contents, start = [], 0
    while start < len(out):
        header_end = out.index(b"\n", start)
        size = int(out[start:header_end].rsplit(b" ", 1)[1])
        contents.append(out[header_end + 1:header_end + 1 + size])
        start = header_end + 1 + size + 1
    return contents


def _first_line(text: object) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0][:300] if lines else "unknown error"
