"""Evolved skills in your own agent: load them, render the prompt block, answer `load_skill`.

    from wikiskill.host import SkillSet

    skills = SkillSet.open("path/to/workspace")              # main; or ref="round/003", any git ref
    system = "You are a helpful agent.\\n\\n" + skills.render(task, mode="index")
    tools = skills.tools(mode="index")                       # the load_skill schema in index mode
    reply = skills.call_tool(call.function.name, call.function.arguments)

    with SkillSet.open("path/to/workspace").live() as live:  # follows main while the host runs:
        live.render(task)                                    # a skill the gate merges shows up

A `SkillSet` reads the committed state of one git ref, so a half-finished edit in the working tree
never reaches a host; pass `ref=None` to read the working tree instead (uncommitted edits included).
The block comes from the same renderer as the task agent's (`wikiskill.knowledge.skillsblock`), in the modes
`full`, `index` and `retrieve`.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import WikiskillError, WorkspaceError
from ..knowledge.lint import working_files
from ..knowledge.settings import SkillsMode, SkillsSettings
from ..knowledge.skills import Skill, load_skills, markdown_section
from ..knowledge.skillsblock import LOAD_SKILL_TOOL, LOAD_SKILL_TOOL_NAME, load_skill, render_skills
from ..llm.chat import ToolSpec
from ..store.settings import load_config
from ..store.workspace import MAIN, Workspace
from . import lookup
from .lookup import Hit
from .watch import ChangeForwarder

Mode = SkillsMode | str
"""A skills mode by member or by its value (`"index"`)."""
LOAD_SKILL = LOAD_SKILL_TOOL_NAME
HISTORY_SECTION = "Evolution History"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SkillChange:
    """A commit on the ref's first-parent line that changed the skill's folder."""

    sha: str
    subject: str
    round: int | None
    step: str | None
    """baseline | propose | gate | rollback | human ... (the `Wikiskill-Step` trailer)."""
    decision: str | None
    """A `trailers.Decision` value for gate and rollback commits (the `Wikiskill-Decision` trailer)."""


@dataclass(frozen=True)
class SkillInfo:
    """A skill with its metadata and history."""

    name: str
    description: str
    location: str
    metadata: dict[str, str]
    files: tuple[str, ...]
    """Every file the skill's folder ships (SKILL.md, PURPOSE.md, scripts/...)."""
    evolution: tuple[str, ...]
    """The lines of PURPOSE.md's Evolution History (`r003 patched: ...`)."""
    changes: tuple[SkillChange, ...]
    """Commits that changed the folder, newest first."""


@dataclass(frozen=True)
class _Snapshot:
    key: dict[str, str] | str
    """What identifies the loaded state: the skills tree id at a ref, or the files themselves."""
    commit: str | None
    files: Mapping[str, str]
    skills: tuple[Skill, ...]


class SkillSet:
    """The skills of a workspace at one git ref (or the working tree), ready for a host agent."""

    def __init__(self, workspace: Workspace, ref: str | None = MAIN, mode: Mode | None = None):
        self.workspace = workspace
        self.ref = ref
        self.settings = load_config(workspace.root).skills.with_mode(mode)
        self._lock = threading.RLock()
        self._changes: dict[str, dict[str, tuple[SkillChange, ...]]] = {}
        self._snapshot = self._load(*self._current())

    @classmethod
    def open(cls, path: str | Path | None = None, ref: str | None = MAIN, mode: Mode | None = None) -> SkillSet:
        """The skills of the workspace at `path` (or the one you are in) at `ref`.

        `mode` is the default rendering mode (else `skills.mode` of wikiskill.yaml)."""
        return cls(Workspace.open(Path(path) if path is not None else None), ref, mode)

    # -- reading ------------------------------------------------------------------------------

    @property
    def commit(self) -> str | None:
        """The commit the skills were read at (None when reading the working tree)."""
        return self._snapshot.commit

    @property
    def skills(self) -> list[Skill]:
        return list(self._snapshot.skills)

    def names(self) -> list[str]:
        return [skill.name for skill in self._snapshot.skills]

    def get(self, name: str) -> Skill:
        for skill in self._snapshot.skills:
            if skill.name == name:
                return skill
        raise WikiskillError(f"no skill named {name!r} (have: {', '.join(self.names()) or 'none'})")

    def render(self, task: str = "", mode: Mode | None = None) -> str:
        """The skills block for a system prompt; `retrieve` picks the skills relevant to `task`."""
        return render_skills(self.skills, self._mode_settings(mode), task)

    def search(self, query: str, corpus: str = "skills", limit: int = 10) -> list[Hit]:
        """Ranked hits (BM25) in the skills, the wiki's pages or the latest train traces, read at
        this set's ref (`wikiskill search`)."""
        return lookup.search(
            self.workspace, query, lookup.corpus(corpus), self.commit if self.ref is not None else None, limit
        )

    def tools(self, mode: Mode | None = None) -> list[ToolSpec]:
        """Tool schemas (OpenAI format) the host must offer: `load_skill` in index mode."""
        if self._mode_settings(mode).mode is SkillsMode.INDEX and self._snapshot.skills:
            return [copy.deepcopy(LOAD_SKILL_TOOL)]
        return []

    def call_tool(self, name: str, arguments: str | Mapping[str, object] | None) -> str:
        """Answer a tool call from `tools()`; `arguments` as the model sent them (JSON or dict).

        Bad arguments come from the model, so they get an explanation it can act on."""
        if name != LOAD_SKILL:
            raise WikiskillError(f"unknown tool {name!r}: a SkillSet answers {LOAD_SKILL!r} only")
        skills = list(self._snapshot.skills)
        wanted = _arguments(arguments).get("name")
        if not isinstance(wanted, str) or not wanted.strip():
            names = ", ".join(skill.name for skill in skills) or "none"
            return f"{LOAD_SKILL} needs a `name` argument, one of: {names}."
        return load_skill(skills, wanted.strip())

    def list(self) -> list[SkillInfo]:
        """Every skill with its metadata, files, and history (PURPOSE.md and git)."""
        with self._lock:
            snapshot = self._snapshot
            changes = self._skill_changes(snapshot.commit or self.workspace.resolve(MAIN))
        return [_info(skill, snapshot.files, changes.get(skill.name, ())) for skill in snapshot.skills]

    # -- reloading ----------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Reload when the skills changed since they were read; True when they did."""
        with self._lock:
            key, commit = self._current()
            if key == self._snapshot.key:
                if commit != self._snapshot.commit:  # the ref moved without touching skills/
                    self._snapshot = dataclasses.replace(self._snapshot, commit=commit)
                return False
            self._snapshot = self._load(key, commit)
            return True

    def live(self, on_change: Callable[[SkillSet], None] | None = None) -> LiveSkills:
        """A view that follows this ref (or the working tree) as it changes; close it when done."""
        return LiveSkills(Workspace(self.workspace.root), self.ref, self.settings.mode, on_change)

    def _current(self) -> tuple[dict[str, str] | str, str | None]:
        """(what identifies the current skills, the commit they are at) -- cheap for a ref."""
        with self._lock:
            if self.ref is None:
                return working_files(self.workspace.root, "skills"), None
            commit = self.workspace.resolve(self.ref)
            return self.workspace.tree_id(commit, "skills"), commit

    def _load(self, key: dict[str, str] | str, commit: str | None) -> _Snapshot:
        with self._lock:
            if isinstance(key, dict):  # the working tree: the key is the files themselves
                files = {path.removeprefix("skills/"): text for path, text in key.items()}
            else:
                assert commit is not None  # a ref's skills: `_current` gives its tree id and commit
                files = self.workspace.read_files(commit, "skills")
            return _Snapshot(key, commit, files, tuple(load_skills(files)))

    def _skill_changes(self, commit: str) -> dict[str, tuple[SkillChange, ...]]:
        """History per skill name at `commit` (cached: a commit's history never changes)."""
        if commit not in self._changes:
            by_name: dict[str, list[SkillChange]] = {}
            for entry, paths in self.workspace.touching_commits(commit, "skills"):
                meta = entry.meta
                change = SkillChange(
                    entry.sha,
                    entry.subject,
                    meta.round,
                    meta.step.value if meta.step else None,
                    meta.decision.value if meta.decision else None,
                )
                for name in sorted({path.split("/")[1] for path in paths if path.count("/") >= 2}):
                    by_name.setdefault(name, []).append(change)
            self._changes = {commit: {name: tuple(items) for name, items in by_name.items()}}
        return self._changes[commit]

    def _mode_settings(self, mode: Mode | None) -> SkillsSettings:
        return self.settings.with_mode(mode)


class LiveSkills(SkillSet):
    """A `SkillSet` that reloads itself when its ref moves (or, for the working tree, when a file
    under skills/ changes), so a long-running host sees a newly merged skill without a restart.

    A watchdog observer reports changes to the git refs (or to skills/); each report costs one
    cheap check (the skills tree id at the ref), and the skills are re-read only when it changed.
    Thread-safe: readers see either the old or the new skills, never a mix. Close it (or use it
    as a context manager) to stop the observer thread.
    """

    def __init__(
        self,
        workspace: Workspace,
        ref: str | None = MAIN,
        mode: Mode | None = None,
        on_change: Callable[[SkillSet], None] | None = None,
    ):
        from watchdog.observers import Observer

        super().__init__(workspace, ref, mode)
        self.on_change = on_change
        self._observer = Observer()
        handler = ChangeForwarder(lambda path: self._on_event(), self._relevant)
        for folder, recursive in self._watched():
            self._observer.schedule(handler, str(folder), recursive=recursive)
        self._observer.daemon = True
        self._observer.start()
        self._on_event()  # a change between loading and watching

    def close(self) -> None:
        if self._observer.is_alive():
            self._observer.stop()
            self._observer.join()

    def __enter__(self) -> LiveSkills:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _watched(self) -> list[tuple[Path, bool]]:
        if self.ref is None:
            skills_dir = self.workspace.root / "skills"
            if not skills_dir.is_dir():
                raise WorkspaceError(f"{skills_dir} does not exist; nothing to watch")
            return [(skills_dir, True)]
        git_dir = self.workspace.git_dir
        return [(git_dir, False), (git_dir / "refs", True)]

    def _relevant(self, path: str) -> bool:
        if self.ref is None:
            return True
        relative = Path(path).relative_to(self.workspace.git_dir).as_posix()
        return not relative.endswith(".lock") and (relative.startswith("refs/") or relative in ("packed-refs", "HEAD"))

    def _on_event(self) -> None:
        try:
            changed = self.refresh()
        except WikiskillError as exc:  # e.g. the ref is being recreated: keep the skills we have
            log.warning("wikiskill: keeping the loaded skills: %s", exc)
            return
        if changed and self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:  # a host's callback must not kill the observer thread
                log.exception("wikiskill: on_change callback failed")


def _arguments(arguments: str | Mapping[str, object] | None) -> Mapping[str, object]:
    if isinstance(arguments, Mapping):
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _info(skill: Skill, files: Mapping[str, str], changes: tuple[SkillChange, ...]) -> SkillInfo:
    prefix = f"{skill.name}/"
    purpose = files.get(f"{prefix}PURPOSE.md", "")
    evolution = tuple(
        line.lstrip("-* ").strip()
        for line in markdown_section(purpose, HISTORY_SECTION).splitlines()
        if line.strip().startswith(("-", "*"))
    )
    return SkillInfo(
        name=skill.name,
        description=skill.description,
        location=skill.location,
        metadata=dict(skill.metadata),
        files=tuple(sorted(path[len(prefix) :] for path in files if path.startswith(prefix))),
        evolution=evolution,
        changes=changes,
    )
