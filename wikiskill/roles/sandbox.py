"""What roles may read: wiki/, skills/ and train traces (and ingested agent sessions) at a git
ref, and nothing else.

Reading from the committed tree (not the disk) means symlinks are never followed and files
outside the workspace do not exist; paths naming val or test material are refused, and so is a
trace whose split is val or test wherever it was stored (with the scorer feedback it carries).
"""

from __future__ import annotations

import re

from ..store.reads import WorkspaceReads
from ..store.traces import Trajectory

_TRACE = re.compile(r"^raw/r(\d{3})/(?:train|ingested)/(.+)\.json$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_PATH_CHARS = 500
READABLE = ("wiki/", "skills/", "traces/")
MAX_READ_CHARS = 30_000
HIDDEN_SPLITS = frozenset({"val", "test"})


class Sandbox:
    def __init__(self, workspace: WorkspaceReads, ref: str, max_chars: int = MAX_READ_CHARS):
        self.workspace = workspace
        self.ref = ref
        self.max_chars = max_chars
        self.traces: dict[str, str] = {}
        for path in sorted(workspace.list_paths(ref, "raw")):
            match = _TRACE.match(path)
            if match:
                self.traces[match.group(2)] = path  # sorted by round, so the latest wins

    @staticmethod
    def _clean(path: str) -> str:
        path = path.strip().replace("\\", "/")
        if len(path) > MAX_PATH_CHARS or _CONTROL.search(path):
            raise LookupError("not a workspace path (too long, or control characters)")
        if path.startswith("/") or re.match(r"^[a-zA-Z]:", path):
            raise LookupError("absolute paths are not allowed; use workspace paths like wiki/index.md")
        parts = [part for part in path.split("/") if part and part != "."]
        if any(part == ".." for part in parts):
            raise LookupError("`..` is not allowed in paths")
        if any(part.lower() in ("val", "test", "val.jsonl", "test.jsonl") for part in parts):
            raise LookupError("validation and test material is not readable")
        return "/".join(parts)

    def read(self, path: str) -> tuple[str, bool]:
        clean = self._clean(path)
        if clean.startswith("traces/"):
            task_id = clean[len("traces/") :].removesuffix(".json")
            return self._trace(task_id), True
        match = _TRACE.match(clean)
        if match:
            return self._trace(match.group(2)), True
        if not clean.startswith(READABLE[:2]):
            raise LookupError(f"{clean!r} is not readable: use wiki/..., skills/... or traces/<task_id>")
        if self.workspace.is_symlink(self.ref, clean):
            raise LookupError(f"{clean!r} is a symbolic link; links are not followed")
        text = self.workspace.read_file(self.ref, clean)
        if text is None:
            raise LookupError(f"no file {clean!r}")
        return text[: self.max_chars], False

    def _trace(self, task_id: str) -> str:
        path = self.traces.get(task_id)
        if path is None:
            raise LookupError(f"no train trace for task {task_id!r}")
        try:
            trajectory = Trajectory.model_validate_json(self.workspace.read_file(self.ref, path) or "")
        except ValueError:
            raise LookupError(f"the trace of task {task_id!r} is unreadable") from None
        if trajectory.split in HIDDEN_SPLITS:  # a val or test trace (its scorer's feedback too) never reaches a role
            raise LookupError("validation and test material is not readable")
        return trajectory.render(self.max_chars)

    def list(self, path: str) -> list[str]:
        clean = self._clean(path).rstrip("/")
        if clean in ("", "."):
            return ["wiki/", "skills/", "traces/"]
        if clean == "traces":
            return [f"traces/{task_id}" for task_id in sorted(self.traces)]
        if not (clean + "/").startswith(READABLE[:2]) and clean not in ("wiki", "skills"):
            raise LookupError(f"{clean!r} is not listable: use wiki, wiki/patterns, skills or traces")
        return sorted(self.workspace.list_paths(self.ref, clean))
