"""Agent Skills folders: parsing, validation against the open spec, and name normalisation."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..core.errors import ProposalError
from ..core.yaml_reading import SAFE

NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
ALLOWED_KEYS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
REQUIRED_SECTIONS = ("When to Apply", "When NOT to Apply", "Instructions")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)


@dataclass(frozen=True)
class Skill:
    """One parsed SKILL.md."""

    name: str
    description: str
    body: str
    text: str
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def location(self) -> str:
        return f"skills/{self.name}/SKILL.md"

    def section(self, title: str) -> str:
        """The text under a `## title` heading, empty when absent."""
        return markdown_section(self.body, title)


def normalize_name(raw: object) -> str:
    """`Break_Repetition Loop` -> `break-repetition-loop`; raises when nothing valid remains."""
    if not isinstance(raw, str):
        raise ProposalError(f"skill name must be a string, got {type(raw).__name__}")
    name = re.sub(r"[^a-z0-9]+", "-", raw.strip().lower()).strip("-")[:MAX_NAME].strip("-")
    if not name:
        raise ProposalError(f"skill name {raw[:80]!r} has no letters or digits")
    return name


def split_front_matter(text: str) -> tuple[dict[object, object], str]:
    """Return (front matter mapping, body); raise ValueError when the front matter is unusable."""
    match = _FRONT_MATTER.match(text)
    if not match:
        raise ValueError("SKILL.md must start with YAML front matter between '---' lines")
    try:
        data = SAFE.load(match.group(1))
    except (yaml.YAMLError, RecursionError) as exc:  # PyYAML recurses once per nesting level
        raise ValueError(f"front matter is not valid YAML: {exc.__class__.__name__}") from exc
    if not isinstance(data, dict):
        raise ValueError("front matter must be a YAML mapping")
    return data, match.group(2)


def markdown_section(body: str, title: str) -> str:
    pattern = re.compile(rf"^#{{1,6}}\s*{re.escape(title)}\s*$", re.IGNORECASE | re.MULTILINE)
    match = pattern.search(body)
    if not match:
        return ""
    rest = body[match.end() :]
    following = re.search(r"^#{1,6}\s", rest, re.MULTILINE)
    return rest[: following.start()].strip() if following else rest.strip()


def skill_problems(text: str, directory_name: str, require_sections: bool = True) -> list[str]:
    """Everything that breaks the Agent Skills rules (plus wikiskill's required sections)."""
    try:
        data, body = split_front_matter(text)
    except ValueError as exc:
        return [str(exc)]
    problems = []
    unknown = sorted(set(map(str, data)) - ALLOWED_KEYS)
    if unknown:
        problems.append(f"unknown front matter keys: {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name) or len(name) > MAX_NAME:
        problems.append(f"name {name!r} must be 1-{MAX_NAME} lowercase letters, digits and single hyphens")
    elif name != directory_name:
        problems.append(f"name {name!r} must equal the directory name {directory_name!r}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("description is required and must be a non-empty string")
    elif len(description) > MAX_DESCRIPTION:
        problems.append(f"description is longer than {MAX_DESCRIPTION} characters")
    compatibility = data.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY):
        problems.append(f"compatibility must be a string of at most {MAX_COMPATIBILITY} characters")
    metadata = data.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        problems.append("metadata must map strings to strings")
    if require_sections:
        missing = [title for title in REQUIRED_SECTIONS if not markdown_section(body, title)]
        if missing:
            problems.append(f"missing sections: {', '.join(missing)}")
    return problems


def parse_skill(text: str) -> Skill:
    data, body = split_front_matter(text)
    found = data.get("metadata")
    metadata = found if isinstance(found, dict) else {}
    return Skill(
        name=str(data.get("name", "")),
        description=str(data.get("description", "")).strip(),
        body=body.strip(),
        text=text,
        metadata={str(k): str(v) for k, v in metadata.items()},
    )


def with_front_matter(text: str, name: str, extra_metadata: dict[str, str]) -> str:
    """Rewrite the front matter so `name` is the directory name and metadata values are strings."""
    data, body = split_front_matter(text)
    data["name"] = name
    found = data.get("metadata")
    metadata = {str(k): str(v) for k, v in (found if isinstance(found, dict) else {}).items()}
    metadata.update(extra_metadata)
    data["metadata"] = metadata
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000).strip()
    return f"---\n{front}\n---\n\n{body.strip()}\n"


def with_description(text: str, description: str) -> str:
    """The SKILL.md with its front matter's description replaced, its body left as it is."""
    data, body = split_front_matter(text)
    data["description"] = " ".join(description.split())
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000).strip()
    return f"---\n{front}\n---\n\n{body.strip()}\n"


def load_skills(files: dict[str, str]) -> list[Skill]:
    """Skills from a `{relative path under skills/: text}` mapping, sorted by name.

    Folders whose SKILL.md does not parse are left out, so a broken hand edit never breaks
    the agent; `wikiskill lint` reports them.
    """
    skills = []
    for path, text in sorted(files.items()):
        parts = Path(path).parts
        if len(parts) != 2 or parts[1] != "SKILL.md":
            continue
        try:
            skill = parse_skill(text)
        except ValueError:
            continue
        if skill.name == parts[0]:
            skills.append(skill)
    return skills


def write_skill_folders(skills: Iterable[Skill], folder: Path) -> None:
    """Each skill as an Agent Skills folder, `<folder>/<name>/SKILL.md`, for an agent that reads
    skills from disk: copies, never links, so nothing the agent does reaches the workspace."""
    folder.mkdir(parents=True, exist_ok=True)
    for skill in skills:
        (folder / skill.name).mkdir()
        (folder / skill.name / "SKILL.md").write_text(skill.text, encoding="utf-8")
