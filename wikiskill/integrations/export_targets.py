"""Where `wikiskill export DIR --target T` puts the skill folders, per host.

Every host reads the same Agent Skills folders (`<name>/SKILL.md` and the files beside it); they
differ in the folder they read them from:

- `agents`: DIR itself is the skills folder (any Agent Skills reader, or a folder you point one at);
- `claude`: Claude Code reads `.claude/skills/` of a project, and `~/.claude/skills/` for all
  projects: DIR is the project (or your home folder);
- `codex`: Codex reads `.agents/skills/` of a repository (from the working directory up to the
  repository root), and `~/.agents/skills/` for all repositories (older releases:
  `~/.codex/skills/`): DIR is the repository (or your home folder);
- `harbor`: DIR is the folder `harbor run --skill DIR` takes: Harbor reads every SKILL.md at its
  top or in its subfolders and copies the skills into each trial's sandbox. DIR/<name>/ for each
  skill, so DIR may not be one skill folder itself (a SKILL.md at its top).

Nothing is written into a host's folder unless DIR names it (or the folder that holds it).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from ..contracts.integrations import EXPORT_TARGETS, ExportTarget
from ..core.errors import WikiskillError
from ..core.parts import EXPORT_TARGET


class ExportError(WikiskillError):
    """The export directory cannot be used as asked."""


@EXPORT_TARGET.builtin
class AgentSkills:
    """DIR itself is the skills folder (any Agent Skills reader)."""

    def skills_dir(self, dest: Path) -> Path:
        return dest


class HostSkillsFolder:
    """A host that reads skills from one folder under a project (or the user's home)."""

    kind: ClassVar[str]
    host: ClassVar[str]
    folder: ClassVar[str]
    """Where the host reads skills, relative to the project or home folder."""
    other_folders: ClassVar[tuple[str, ...]] = ()
    """Other skills folders of the host, refused as DIR the same way."""

    def skills_dir(self, dest: Path) -> Path:
        for folder in (self.folder, *self.other_folders):
            depth = len(Path(folder).parts)
            if dest.parts[-depth:] == Path(folder).parts:
                raise ExportError(
                    f"{dest} is a {self.host} skills folder itself: name the project or home folder that holds it "
                    f"({dest.parents[depth - 1]}) with --target {self.kind}, or use --target agents to write "
                    f"into {dest} directly"
                )
        return dest / self.folder


@EXPORT_TARGET.builtin
class ClaudeCode(HostSkillsFolder):
    """Claude Code: DIR/.claude/skills, DIR the project or your home folder."""

    host = "Claude Code"
    folder = ".claude/skills"


@EXPORT_TARGET.builtin
class Codex(HostSkillsFolder):
    """Codex: DIR/.agents/skills, DIR the repository or your home folder."""

    host = "Codex"
    folder = ".agents/skills"
    other_folders = (".codex/skills",)


@EXPORT_TARGET.builtin
class HarborSkills:
    """The folder of skill folders that `harbor run --skill DIR` copies into each trial's sandbox."""

    def skills_dir(self, dest: Path) -> Path:
        if (dest / "SKILL.md").is_file():
            raise ExportError(
                f"{dest} holds a SKILL.md, so Harbor would read it as one skill: name a folder for "
                "the skill folders (new, or holding only skill folders) with --target harbor"
            )
        return dest


def export_target(name: str) -> ExportTarget:
    """The target `--target` names; a one-line error listing the targets when it names none."""
    return EXPORT_TARGETS.create(name)
