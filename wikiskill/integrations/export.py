"""Export the accepted skills as plain Agent Skills folders that any agent loads as they are.

`export_skills(ws, DIR, ref, target)` writes `<name>/` folders into the target's skills folder: DIR
itself, or the folder a host reads under DIR (`DIR/.claude/skills`, see wikiskill.integrations.export_targets).
Each holds SKILL.md plus every other file the skill's folder holds at `ref`, byte for byte,
executable bits kept, except that a Markdown link that would leave the skills folder (PURPOSE.md's
`../../wiki/...`) is dropped and its text kept. A manifest in the skills folder records which files
the export wrote, so a re-export rewrites nothing that is unchanged, removes the skills that are
gone, and never deletes or overwrites a file that it did not write itself.
"""

from __future__ import annotations

import json
import os
import posixpath
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..contracts.integrations import ExportTarget
from ..knowledge.links import rewrite_links
from ..knowledge.skills import NAME_PATTERN, skill_problems
from ..store.workspace import MAIN, Workspace
from .export_targets import AgentSkills, ExportError

MANIFEST = ".wikiskill-export.json"
MANIFEST_FORMAT = 1

SkillFiles = dict[str, tuple[bytes, bool]]
"""`{path inside the skill folder: (bytes, executable)}`."""


@dataclass
class ExportResult:
    dest: Path
    commit: str
    skills: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    """Files created or rewritten (relative to dest)."""
    removed: list[str] = field(default_factory=list)
    """Files of earlier exports that are no longer part of any skill (relative to dest)."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Skill folders left out, with the reason (a SKILL.md that breaks the Agent Skills rules)."""


def export_skills(ws: Workspace, dest: Path, ref: str = MAIN, target: ExportTarget | None = None) -> ExportResult:
    """Write the skills at `ref` as Agent Skills folders into the folder `target` reads under `dest`
    (`dest` itself for plain Agent Skills, the default); safe to repeat."""
    commit = ws.resolve(ref)
    dest = _checked_destination(ws, (target or AgentSkills()).skills_dir(Path(dest).expanduser().resolve()))
    skills, skipped = exportable(ws.blobs(commit, "skills"))
    previous = _read_manifest(dest)
    _refuse_foreign_files(dest, skills, previous)
    result = ExportResult(dest, commit, sorted(skills), skipped=skipped)
    # Record the union first: a crash part-way leaves every file we may have written on record.
    union = {name: sorted(set(previous.get(name, [])) | set(skills.get(name, {}))) for name in {*previous, *skills}}
    _write_manifest(dest, ref, commit, union)
    for name, files in sorted(skills.items()):
        for relative, (data, executable) in sorted(files.items()):
            if relative.endswith(".md"):
                data = _contained_links(f"{name}/{relative}", data)
            if _write_if_changed(dest / name / relative, data, executable):
                result.written.append(f"{name}/{relative}")
    for name, relatives in sorted(previous.items()):
        for relative in relatives:
            if relative not in skills.get(name, {}):
                _remove(dest, dest / name / relative)
                result.removed.append(f"{name}/{relative}")
    _write_manifest(dest, ref, commit, {name: sorted(files) for name, files in skills.items()})
    return result


def exportable(blobs: dict[str, tuple[bytes, bool]]) -> tuple[dict[str, SkillFiles], dict[str, str]]:
    """Group `skills/` blobs by skill folder; leave out folders whose SKILL.md breaks the rules."""
    folders: dict[str, SkillFiles] = {}
    for path, blob in blobs.items():
        name, _, relative = path.partition("/")
        if relative:
            folders.setdefault(name, {})[relative] = blob
    skills, skipped = {}, {}
    for name, files in sorted(folders.items()):
        if "SKILL.md" not in files:
            skipped[name] = "no SKILL.md"
            continue
        problems = skill_problems(files["SKILL.md"][0].decode("utf-8", "replace"), name, require_sections=False)
        if problems:
            skipped[name] = "; ".join(problems)
        else:
            skills[name] = files
    return skills, skipped


def _contained_links(path: str, data: bytes) -> bytes:
    """The file with every relative link that resolves outside the export folder dropped."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data

    def inside(target: str) -> str | None:
        local = target.split("#", 1)[0]
        if not local:
            return target
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), local))
        return None if local.startswith("/") or resolved == ".." or resolved.startswith("../") else target

    return rewrite_links(text, inside).encode("utf-8")


def _checked_destination(ws: Workspace, dest: Path) -> Path:
    dest = dest.expanduser().resolve()
    for inside, what in ((ws.root / "skills", "the workspace's skills/"), (ws.git_dir, "the git directory")):
        if dest.is_relative_to(inside.resolve()):
            raise ExportError(f"refusing to export into {dest}: it is inside {what}; choose a folder outside it")
    if dest.exists() and not dest.is_dir():
        raise ExportError(f"{dest} exists and is not a directory")
    dest.mkdir(parents=True, exist_ok=True)
    return dest


def _read_manifest(dest: Path) -> dict[str, list[str]]:
    """`{skill name: [files written]}` of the previous export; validated, since a manifest is an
    ordinary file that anyone could have edited, and it decides what we delete."""
    path = dest / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        skills = data["skills"]
        if data.get("format") != MANIFEST_FORMAT or not isinstance(skills, dict):
            raise ValueError
    except (ValueError, KeyError, TypeError):
        raise ExportError(
            f"{path} is not a manifest this version of wikiskill wrote; move it away (or export into an empty folder)"
        ) from None
    for name, files in skills.items():
        if not NAME_PATTERN.match(name) or not isinstance(files, list) or not all(map(_safe_relative, files)):
            raise ExportError(f"{path} has an invalid entry {name!r}; refusing to trust it")
    return skills


def _safe_relative(path: object) -> bool:
    return (
        isinstance(path, str)
        and bool(path)
        and not path.startswith("/")
        and posixpath.normpath(path) == path
        and ".." not in path.split("/")
    )


def _refuse_foreign_files(dest: Path, skills: dict[str, SkillFiles], previous: dict[str, list[str]]) -> None:
    """Never write into a folder, or over a file, that an earlier export did not create."""
    for name, files in skills.items():
        folder = dest / name
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise ExportError(f"{folder} is not a plain folder; move it away to export skill {name!r}")
        if folder.exists() and name not in previous:
            raise ExportError(
                f"{folder} exists and was not written by `wikiskill export`; move it away to export skill {name!r}"
            )
        ours = set(previous.get(name, []))
        for relative in files:
            target = folder / relative
            if _through_symlink(dest, target) or (target.exists() and relative not in ours):
                raise ExportError(f"{target} exists and was not written by `wikiskill export`; move it away")


def _through_symlink(dest: Path, target: Path) -> bool:
    path = target
    while path != dest:
        if path.is_symlink():
            return True
        path = path.parent
    return False


def _write_if_changed(path: Path, data: bytes, executable: bool) -> bool:
    mode = 0o755 if executable else 0o644
    try:
        same = path.read_bytes() == data and (path.stat().st_mode & 0o777) == mode
    except FileNotFoundError:
        same = False
    if same:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, data, mode)
    return True


def _atomic_write(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".export-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove(dest: Path, path: Path) -> None:
    """Delete one file we wrote and the folders it leaves empty (never dest itself)."""
    if not _through_symlink(dest, path.parent):
        path.unlink(missing_ok=True)
    directory = path.parent
    while directory != dest and directory.is_dir() and not directory.is_symlink() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def _write_manifest(dest: Path, ref: str, commit: str, skills: dict[str, list[str]]) -> None:
    data = {
        "format": MANIFEST_FORMAT,
        "ref": ref,
        "commit": commit,
        "skills": {name: skills[name] for name in sorted(skills)},
    }
    _write_if_changed(dest / MANIFEST, (json.dumps(data, indent=2) + "\n").encode("utf-8"), executable=False)
