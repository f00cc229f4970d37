"""Reading a workspace repository: objects, trees, logs with their trailers, refs and diffs.

Every read goes through git's object database (never the working tree), mostly through
GitPython's long-running `git cat-file --batch` processes; trees and logs, which never change
once written, are kept by id.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import git

from ..core.errors import SchemaError, WorkspaceError
from .trailers import PREFIX as TRAILER_PREFIX
from .trailers import Trailers

MAIN = "main"
READS_KEPT = 8  # trees and logs kept in memory by id
SYMLINK_MODE = "120000"


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    subject: str
    trailers: dict[str, str] = field(default_factory=dict)

    @cached_property
    def meta(self) -> Trailers:
        """The commit's Wikiskill trailers, typed (SchemaError, naming the commit, when they are
        not in a schema this wikiskill reads)."""
        try:
            return Trailers.parse(self.trailers)
        except SchemaError as exc:
            raise SchemaError(f"commit {self.sha[:10]} ({self.subject[:60]}): {exc}") from None


class WorkspaceReads:
    """The read side of a workspace repository (the `Workspace` facade adds the writes)."""

    def __init__(self, root: Path, of: WorkspaceReads | None = None):
        """`of`: the read side of that one, through its repository handle and the trees and logs
        it keeps (a commit made through it extends the logs read here)."""
        self.root = root
        self.repo: git.Repo = of.repo if of else git.Repo(root)
        # tree id -> its blobs; (tip, first parent) -> log
        self._trees: OrderedDict[str, list[tuple[str, str, bytes]]] = of._trees if of else OrderedDict()
        self._logs: OrderedDict[tuple[str, bool], list[Commit]] = of._logs if of else OrderedDict()

    def read_side(self) -> WorkspaceReads:
        """These reads alone, for a context that must not write (the loop's Reader): what it
        holds cannot commit, move a ref or touch the working tree."""
        return WorkspaceReads(self.root, of=self)

    @property
    def git_dir(self) -> Path:
        """The repository's git directory (where refs live), for file-system watchers."""
        return Path(self.repo.git_dir)

    def head(self, branch: str = MAIN) -> str | None:
        return self.object_id(f"refs/heads/{branch}^{{commit}}")

    def resolve(self, ref: str) -> str:
        sha = self.object_id(f"{ref}^{{commit}}")
        if sha is None:
            raise WorkspaceError(f"unknown git ref {ref!r}")
        return sha

    def tree_id(self, ref: str, path: str) -> str:
        """The git tree id of `path` at `ref` (the empty tree's id when absent)."""
        return self.object_id(f"{ref}:{path}") or "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

    def object_id(self, name: str) -> str | None:
        """The id of the object `name` (`main`, `main:wiki/index.md`, ...), None when there is none."""
        found = self._ask_cat_file(self.repo.git.get_object_header, name)
        return found[0].decode() if found else None

    def _object_bytes(self, name: str) -> bytes | None:
        """The content of the object `name`, None when there is none."""
        found = self._ask_cat_file(self.repo.git.get_object_data, name)
        return found[3] if found else None

    def _ask_cat_file(self, ask: Callable[[str], tuple[Any, ...]], name: str) -> tuple[Any, ...] | None:
        """`ask(name)`: one of GitPython's calls to its long-running `git cat-file --batch[-check]`,
        which spares a git process per read; None when `name` names no object. That protocol is a
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
        """`{path relative to prefix: text}` of every regular file under `prefix` at `ref`.

        Symbolic links are left out: a link's blob is its target's path, which no step reads,
        rewrites or shows to a role (`links` names them)."""
        return {
            path: data.decode("utf-8", "replace")
            for path, mode, data in self._blobs_under(ref, prefix)
            if mode != SYMLINK_MODE
        }

    def links(self, ref: str, prefix: str) -> list[str]:
        """Workspace paths of the symbolic links committed under `prefix` at `ref`."""
        base = prefix.strip("/")
        return [
            f"{base}/{path}" if base else path
            for path, mode, _ in self._blobs_under(ref, prefix)
            if mode == SYMLINK_MODE
        ]

    def _blobs_under(self, ref: str, prefix: str) -> list[tuple[str, str, bytes]]:
        """`(path relative to prefix, mode, bytes)` of every blob under `prefix` at `ref`, read by
        one `ls-tree` and one `cat-file --batch` rather than a round trip per blob. A tree never
        changes, so the last few read are kept by id: the steps of a round read the same skills."""
        tree = self.object_id(f"{ref}:{prefix.rstrip('/')}")  # `ref`: a commit, a tag or a tree
        if tree is None:
            if self.object_id(ref) is None:
                raise WorkspaceError(f"unknown git ref {ref!r}")
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
            listing: str = self.repo.git.ls_tree(ref, "--", path)
            return listing.startswith(f"{SYMLINK_MODE} ")
        except git.GitCommandError:
            return False

    def log(self, ref: str = MAIN, first_parent: bool = True) -> list[Commit]:
        """Commits of `ref`, newest first, with their Wikiskill trailers. A commit's history never
        changes, so the last few logs are kept by tip, and a commit made here extends its parent's."""
        tip = None if ref.startswith("-") else self.object_id(f"{ref}^{{commit}}")
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
        text: str = self.repo.git.diff("--no-renames", "--no-color", old, new, "--", prefix)
        return text

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        try:
            self.repo.git.merge_base("--is-ancestor", ancestor, descendant)
            return True
        except git.GitCommandError:
            return False

    def merge_base(self, a: str, b: str) -> str | None:
        try:
            return self.repo.git.merge_base(a, b).strip() or None
        except git.GitCommandError:
            return None

    def merged_tree(self, ours: str, theirs: str) -> str:
        """A three-way merge computed without touching the working tree; raises on conflicts."""
        try:
            merged: str = self.repo.git.merge_tree("--write-tree", "--no-messages", ours, theirs)
            return merged.splitlines()[0]
        except git.GitCommandError as exc:
            raise WorkspaceError(f"cannot combine {ours[:8]} with {theirs[:8]}: conflicting changes") from exc

    def merge_text(self, ours: str, base: str, theirs: str) -> str | None:
        """A line-level three-way merge of one file's texts (`git merge-file`); None on a conflict."""
        with tempfile.TemporaryDirectory(prefix="wikiskill-merge-") as folder:
            paths = []
            for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
                path = Path(folder, name)
                path.write_bytes(text.encode("utf-8"))
                paths.append(str(path))
            done = subprocess.run(["git", "merge-file", "-p", *paths], capture_output=True, check=False)
        return done.stdout.decode("utf-8") if done.returncode == 0 else None

    def blobs_with_modes(self, ref: str, prefix: str) -> list[tuple[str, str, bytes]]:
        """`(path relative to prefix, git mode, bytes)` of every entry under `prefix` at `ref`,
        symlinks (mode 120000, their target as bytes) included."""
        return list(self._blobs_under(ref, prefix))

    def blobs(self, ref: str, prefix: str) -> dict[str, tuple[bytes, bool]]:
        """`{path relative to prefix: (bytes, executable)}` of every regular file under `prefix`
        at `ref`, byte for byte; symlinks and submodules are left out."""
        return {
            path: (data, mode == "100755")
            for path, mode, data in self._blobs_under(ref, prefix)
            if mode in ("100644", "100755")
        }

    def touching_commits(self, ref: str, prefix: str) -> list[tuple[Commit, list[str]]]:
        """Commits on `ref`'s first-parent line that changed files under `prefix`, newest first,
        each with those paths. A merge counts with its diff to its first parent, so an accepted
        gate merge appears with its trailers (decision, round) rather than the branch commits."""
        out = self.repo.git.log(
            "--first-parent", "--diff-merges=first-parent", "--name-only", "--format=%x1e%H", ref, "--", prefix
        )
        paths_by_sha: dict[str, list[str]] = {}
        for record in out.split("\x1e"):
            lines = [line for line in record.splitlines() if line]
            if lines:
                paths_by_sha[lines[0]] = lines[1:]
        return [(commit, paths_by_sha[commit.sha]) for commit in self.log(ref) if commit.sha in paths_by_sha]

    def git_input(self, args: list[str], data: bytes, env: dict[str, str] | None = None) -> str:
        """Run git with `data` on stdin (GitPython's istream needs a real file); its output as text."""
        return self._git_bytes(args, data, env).decode("utf-8", "replace").strip()

    def _git_bytes(self, args: list[str], data: bytes = b"", env: dict[str, str] | None = None) -> bytes:
        """Run git with `data` on stdin; its output byte for byte."""
        done = subprocess.run(
            ["git", *args],
            input=data,
            cwd=self.root,
            capture_output=True,
            check=False,
            env={**os.environ, **(env or {})},
        )
        if done.returncode != 0:
            raise WorkspaceError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()[:300]}")
        return done.stdout


def _batch_contents(out: bytes) -> list[bytes]:
    """The objects' contents in the output of `git cat-file --batch` ("<id> <type> <size>" lines)."""
    contents, start = [], 0
    while start < len(out):
        header_end = out.index(b"\n", start)
        size = int(out[start:header_end].rsplit(b" ", 1)[1])
        contents.append(out[header_end + 1 : header_end + 1 + size])
        start = header_end + 1 + size + 1
    return contents
