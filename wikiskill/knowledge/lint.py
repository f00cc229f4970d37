"""Checks of the hand-editable layers (skills/ and wiki/) that a person or a model can break.

- every `skills/<name>/SKILL.md` follows the Agent Skills rules (and wikiskill's sections);
- every relative Markdown link in skills/ and wiki/ resolves (web links and anchors are skipped);
- `wiki/index.md` lists every page of `wiki/patterns/` and links no missing page.

The checks run on a `{workspace-relative path: text}` mapping, so the same code lints the working
tree (`wikiskill lint`, `wikiskill watch`) and any candidate tree built in memory.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from urllib.parse import unquote

from .links import SCHEME, links
from .search import overlap
from .skills import load_skills, skill_problems
from .wiki import INDEX, PATTERNS, index_entries

LINTED = ("skills", "wiki")
SKILL_OVERLAP = 0.6
"""Share of common words (description and instructions) above which two skills are reported."""
_PAGE = re.compile(rf"^{re.escape(PATTERNS)}/([^/]+)\.md$")


@dataclass(frozen=True, order=True)
class Problem:
    """One thing to fix: the file it is in and what is wrong. A warning is worth a look but does
    not fail `wikiskill lint`."""

    path: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        return f"{'warning: ' if self.warning else ''}{self.path}: {self.message}"


def hidden(path: str) -> bool:
    """Dotfiles and editor files (`.SKILL.md.swp`, `page.md~`, `.#page.md`, `#page.md#`)."""
    return any(
        part.startswith(".") or part.endswith("~") or (part.startswith("#") and part.endswith("#"))
        for part in path.split("/")
    )


def working_files(root: Path, *folders: str) -> dict[str, str]:
    """`{workspace-relative path: text}` of the regular files under `folders` in the working tree.

    Hidden files and symbolic links are left out (`symlinks` reports the latter)."""
    files = {}
    for path in _walk(root, folders):
        full = root / path
        if not full.is_symlink() and full.is_file():
            try:
                files[path] = full.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:  # deleted while we walked
                continue
    return files


def symlinks(root: Path, *folders: str) -> list[str]:
    """Workspace-relative paths of symbolic links under `folders` (they could point anywhere)."""
    return [path for path in _walk(root, folders) if (root / path).is_symlink()]


def _walk(root: Path, folders: tuple[str, ...]) -> Iterator[str]:
    for folder in folders:
        for directory, subdirs, names in os.walk(root / folder):
            relative = Path(directory).relative_to(root).as_posix()
            linked = [d for d in subdirs if (Path(directory) / d).is_symlink()]
            subdirs[:] = sorted(d for d in subdirs if not hidden(d) and d not in linked)
            for name in sorted(names + linked):
                if not hidden(name):
                    yield f"{relative}/{name}"


def lint_workspace(root: Path) -> list[Problem]:
    """Every problem in the working tree's skills/ and wiki/, uncommitted edits included, and
    warnings about skills that overlap."""
    files = working_files(root, *LINTED)
    problems = lint_files(files, outside=lambda path: (root / path).exists()) + skill_overlaps(files)
    problems += [
        Problem(path, "is a symbolic link, not read (skills/ and wiki/ hold plain files only)")
        for path in symlinks(root, *LINTED)
    ]
    return sorted(set(problems))


def lint_files(files: Mapping[str, str], outside: Callable[[str], bool] = lambda path: False) -> list[Problem]:
    """Problems of a tree given as `{workspace-relative path: text}` (skills/ and wiki/ files).

    `outside(path)` says whether a link target outside skills/ and wiki/ exists (for example a
    trace under raw/); inside those folders, `files` alone decides."""
    files = {path: text for path, text in files.items() if not hidden(path)}
    problems, dangling = _index_problems(files)
    problems += _skill_folder_problems(files)
    for path, text in files.items():
        if path.endswith(".md"):
            # the index check already reports the index's links to missing pages
            skip = dangling if path == INDEX else set()
            problems += _link_problems(path, text, files, outside, skip)
    return sorted(set(problems))


def skill_overlaps(files: Mapping[str, str]) -> list[Problem]:
    """Warnings for pairs of skills whose description and instructions share most of their words:
    both reach the prompt, so one of them is probably bloat."""
    skills = load_skills({path[len("skills/") :]: text for path, text in files.items() if path.startswith("skills/")})
    warnings = []
    for first, second in combinations(skills, 2):
        shared = overlap(
            f"{first.description} {first.section('Instructions')}",
            f"{second.description} {second.section('Instructions')}",
        )
        if shared >= SKILL_OVERLAP:
            warnings.append(
                Problem(
                    first.location,
                    f"overlaps skill {second.name!r} ({shared:.0%} of their words "
                    "are shared): merge them or retire one",
                    warning=True,
                )
            )
    return warnings


def _skill_folder_problems(files: Mapping[str, str]) -> list[Problem]:
    folders = sorted({path.split("/")[1] for path in files if path.startswith("skills/") and path.count("/") >= 2})
    problems = []
    for name in folders:
        path = f"skills/{name}/SKILL.md"
        if path not in files:
            problems.append(Problem(f"skills/{name}", "skill folder has no SKILL.md"))
            continue
        problems += [Problem(path, message) for message in skill_problems(files[path], name)]
    return problems


def _index_problems(files: Mapping[str, str]) -> tuple[list[Problem], set[str]]:
    """Index/page mismatches, and the paths of the missing pages the index links to."""
    pages = {match.group(1) for match in map(_PAGE.match, files) if match}
    if INDEX not in files:
        return ([Problem(INDEX, "is missing; it must list every page in wiki/patterns/")] if pages else []), set()
    listed = {slug for _, slug, _ in index_entries(files[INDEX])}
    problems = [Problem(INDEX, f"lists patterns/{slug}.md, which does not exist") for slug in sorted(listed - pages)]
    problems += [
        Problem(f"{PATTERNS}/{slug}.md", f"is not listed in {INDEX} (add `- [{slug}](patterns/{slug}.md): summary`)")
        for slug in sorted(pages - listed)
    ]
    return problems, {f"{PATTERNS}/{slug}.md" for slug in listed - pages}


def _link_problems(
    path: str, text: str, files: Mapping[str, str], outside: Callable[[str], bool], skip: set[str]
) -> list[Problem]:
    problems = []
    for target in links(text):
        local = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if not local or SCHEME.match(target):
            continue
        if local.startswith("/"):
            resolved = posixpath.normpath(local.lstrip("/"))
        else:
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), local))
        if resolved == ".." or resolved.startswith("../"):
            problems.append(Problem(path, f"link {target!r} points outside the workspace"))
        elif resolved not in skip and not _exists(resolved, files, outside):
            problems.append(Problem(path, f"broken link {target!r}: {resolved} does not exist"))
    return problems


def _exists(path: str, files: Mapping[str, str], outside: Callable[[str], bool]) -> bool:
    if path.split("/", 1)[0] not in LINTED:
        return outside(path)
    return path in files or any(name.startswith(path.rstrip("/") + "/") for name in files) or path in LINTED
