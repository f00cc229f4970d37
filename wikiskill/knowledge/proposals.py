"""Turn a proposer's raw proposal into file changes under skills/<name>/, or a reasoned rejection.

The models below are both the schema of the proposer's `finish` tool and the parser of what it
sends: a field added to one is shown to the model and checked in its reply. What they tolerate
from small models is written in them (`_ProposalModel`, `CreateSkill`, `PatchSkill`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ..core.errors import ProposalError
from ..core.redact import scrub
from ..store.trailers import Action
from .edits import Edit, apply_edits, parse_edits
from .purpose import add_history
from .skills import normalize_name, skill_problems, with_description, with_front_matter

MAX_SKILL_CHARS = 20_000
MAX_RATIONALE_CHARS = 2_000
SKILL_PARTS = {
    "when_to_apply": "When to Apply",
    "when_not_to_apply": "When NOT to Apply",
    "instructions": "Instructions",
}
"""The sections a SKILL.md built from parts has, by field."""
PARTS = ("description", *SKILL_PARTS)


def _skill_name(raw: object) -> str:
    """`Break_Repetition Loop` -> `break-repetition-loop`; no name may carry a secret."""
    try:
        name = normalize_name(raw)
    except ProposalError as exc:
        raise ValueError(str(exc)) from None
    if scrub(name) != name:
        raise ValueError("the skill name contains a secret")
    return name


SkillName = Annotated[str, BeforeValidator(_skill_name)]


class SkillEdit(Edit):
    file: Literal["SKILL.md", "PURPOSE.md"] = "SKILL.md"


PATCHABLE: tuple[str, ...] = get_args(SkillEdit.model_fields["file"].annotation)


class _ProposalModel(BaseModel):
    """Small models send `null` for a field they leave empty and often no rationale: a null
    counts as not sent, and the rationale defaults to none, on one line and cut to length."""

    @model_validator(mode="before")
    @classmethod
    def _tolerated(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {key: value for key, value in data.items() if value is not None}
            data.setdefault("rationale", "")
        return data

    @field_validator("rationale", check_fields=False)
    @classmethod
    def _rationale_on_one_line(cls, rationale: str) -> str:
        return _one_line(rationale)


def _one_line(rationale: str) -> str:
    return " ".join(rationale.split())[:MAX_RATIONALE_CHARS]


class CreateSkill(_ProposalModel):
    """Create a skill (or rewrite one). SKILL.md is built from the four parts, or given whole."""

    action: Literal[Action.CREATE]
    name: SkillName = Field(description="lowercase letters, digits and single hyphens, at most 64 characters")
    description: str = Field(description="what the skill does and when to use it (one or two sentences)")
    when_to_apply: str = Field(description="the situations the skill is for")
    when_not_to_apply: str = Field(description="the situations it is not for")
    instructions: str = Field(description="concrete, numbered steps: exact actions, not vague advice")
    rationale: str = Field(description="why this change should fix the failures, citing task ids")
    skill_md: str = Field(
        "",
        description="instead of the four parts: the full SKILL.md (YAML front matter "
        "with name and description, then the three sections)",
    )
    purpose_md: str = Field(
        "",
        description="the full PURPOSE.md: ## Origin, ## Patterns Addressed (links to "
        "wiki/patterns/<slug>.md) and ## Evolution History",
    )

    @model_validator(mode="before")
    @classmethod
    def _whole_or_parts(cls, data: Any) -> Any:
        """A `skill_md` given whole stands in for the parts left out."""
        if not isinstance(data, dict):
            return data
        if data.get("skill_md") not in (None, ""):
            return {**data, **{part: "" for part in PARTS if data.get(part) is None}}
        if all(data.get(part) is None for part in PARTS):
            parts = ", ".join(f"`{part}`" for part in PARTS[:-1])
            raise ValueError(f"`skill_md` must be a non-empty string (or give {parts} and `{PARTS[-1]}`)")
        return data

    @model_validator(mode="after")
    def _texts_fit(self) -> CreateSkill:
        for key in ("skill_md",) if self.whole else PARTS:
            if not getattr(self, key).strip():
                raise ValueError(f"`{key}` must be a non-empty string")
        for key in ("skill_md", *PARTS, "purpose_md"):
            if len(getattr(self, key)) > MAX_SKILL_CHARS:
                raise ValueError(f"`{key}` is longer than {MAX_SKILL_CHARS} characters")
        return self

    @property
    def whole(self) -> bool:
        """Whether SKILL.md is `skill_md` as given. Small models fill in every field they are
        shown: a `skill_md` that is no SKILL.md (no front matter) next to all four parts gives way
        to them."""
        if not self.skill_md:
            return False
        return self.skill_md.lstrip().startswith("---") or not all(getattr(self, part).strip() for part in PARTS)


class PatchSkill(_ProposalModel):
    """Edit an existing skill's SKILL.md or PURPOSE.md."""

    action: Literal[Action.PATCH]
    name: SkillName = Field(description="an existing skill's name")
    edits: list[SkillEdit] = Field(description="edits whose `target` is exact existing text (not needed to append)")
    rationale: str
    _dropped: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _drop_malformed_edits(cls, data: Any, handler: ModelWrapValidatorHandler[PatchSkill]) -> PatchSkill:
        """A malformed edit is dropped with its reason and the others still apply (an edit of a
        file other than SKILL.md or PURPOSE.md refuses the whole patch)."""
        dropped: list[str] = []
        if isinstance(data, dict):
            items = data.get("edits")
            if not isinstance(items, list) or not items:
                raise ValueError("a patch needs a non-empty `edits` list")
            for item in items:
                file = item.get("file", PATCHABLE[0]) if isinstance(item, dict) else PATCHABLE[0]
                if file not in PATCHABLE:
                    raise ValueError(f"edit file {str(file)[:60]!r} is not allowed: use {' or '.join(PATCHABLE)}")
            edits, dropped = parse_edits(items, SkillEdit)
            if not edits:
                raise ValueError(f"no valid edits ({'; '.join(dropped[:3])})")
            data = {**data, "edits": edits}
        patch = handler(data)
        patch._dropped = dropped
        return patch

    @property
    def dropped(self) -> list[str]:
        """The malformed edits left out, each with its reason."""
        return self._dropped


class DescribeSkill(_ProposalModel):
    """Rewrite an existing skill's description (its front matter's only; the rest of SKILL.md
    stays): an agent that loads skills on demand reads the description to decide whether to load
    the skill, so one loaded too rarely where it applies needs a description that names those
    situations."""

    action: Literal[Action.DESCRIBE]
    name: SkillName = Field(description="an existing skill's name")
    description: str = Field(
        description="the new description: what the skill does and the situations to load it in (one or two sentences)"
    )
    rationale: str

    @field_validator("description")
    @classmethod
    def _description_given(cls, description: str) -> str:
        if not description.strip():
            raise ValueError("`description` must be a non-empty string")
        return description


class RetireSkill(_ProposalModel):
    """Remove a skill that no longer earns its place in the prompt (merged when the candidate
    scores at least the incumbent: a smaller prompt at an equal score is a gain)."""

    action: Literal[Action.RETIRE]
    name: SkillName = Field(description="an existing skill's name")
    rationale: str


class NoAction(_ProposalModel):
    """Change nothing: no change is likely to help."""

    action: Literal[Action.NO_ACTION]
    rationale: str


AnyProposal = CreateSkill | PatchSkill | DescribeSkill | RetireSkill | NoAction
ProposalRequest = Annotated[AnyProposal, Field(discriminator="action")]
ACTIONS: tuple[Action, ...] = tuple(
    get_args(model.model_fields["action"].annotation)[0] for model in get_args(AnyProposal)
)
"""The actions a proposal may ask for, in the schema's order."""


class ProposalSchema(BaseModel):
    """The arguments of `finish`: your one proposal."""

    proposal: ProposalRequest


CREATE_EXAMPLE: dict[str, str] = {
    "action": Action.CREATE,
    "name": "<skill-name>",
    "description": "<what it does and when to use it>",
    "when_to_apply": "<situations>",
    "when_not_to_apply": "<situations>",
    "instructions": "1. <exact step>\n2. <exact step>",
    "rationale": "<why it fixes the failures>",
}
"""The create the proposer is shown as an example: every value but the action a placeholder."""


class InvalidProposal(ProposalError):
    """A proposal that cannot be applied; `action` and `name` are kept for skill-impact.md."""

    def __init__(self, reason: str, action: Action = Action.INVALID, name: str = "", rationale: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.action = action
        self.name = name
        self.rationale = rationale


@dataclass
class Proposal:
    """A valid proposal: what was asked, and the files it writes (None: deleted)."""

    request: AnyProposal
    changes: dict[str, str | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def action(self) -> Action:
        return self.request.action

    @property
    def name(self) -> str:
        return getattr(self.request, "name", "")

    @property
    def rationale(self) -> str:
        return self.request.rationale


def skill_dir(name: str) -> str:
    return f"skills/{name}"


def parse_proposal(raw: object) -> AnyProposal:
    """`raw` read by the models above; InvalidProposal with the first reason it is not one."""
    if not isinstance(raw, dict):
        raise InvalidProposal(f"the proposal must be a JSON object, got {type(raw).__name__}")
    try:
        return ProposalSchema.model_validate({"proposal": raw}).proposal
    except ValidationError as exc:
        action = next((action for action in ACTIONS if action == raw.get("action")), Action.INVALID)
        rationale = _one_line(raw["rationale"]) if isinstance(raw.get("rationale"), str) else ""
        raise InvalidProposal(_reason(exc, raw), action, _recorded_name(raw.get("name")), rationale) from None


def _reason(exc: ValidationError, raw: dict[object, object]) -> str:
    error = exc.errors()[0]
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return f"unknown action {str(raw.get('action'))[:40]!r}: use {', '.join(ACTIONS[:-1])} or {ACTIONS[-1]}"
    if error["type"] == "value_error":
        return error["msg"].removeprefix("Value error, ")
    where = ".".join(str(part) for part in error["loc"][2:])  # past ("proposal", <action>)
    return f"`{where}` is missing" if error["type"] == "missing" else f"`{where}`: {error['msg']}"


def _recorded_name(raw: object) -> str:
    """The name an invalid proposal is recorded under: normalised where possible, never a secret."""
    if raw is None:
        return ""
    try:
        return _skill_name(raw)
    except ValueError:
        text = str(raw)[:64]
        return text if scrub(text) == text else "(redacted)"


def prepare_proposal(raw: object, skill_files: dict[str, str], round_number: int) -> Proposal:
    """Validate `raw` against the skills on main (`{path under skills/: text}`).

    Raises InvalidProposal with the reason; nothing outside skills/<name>/ can ever be changed.
    """
    request = parse_proposal(raw)
    proposal = Proposal(request)
    if isinstance(request, NoAction):
        return proposal
    assert isinstance(raw, dict)  # parse_proposal refused anything else
    name, raw_name = request.name, raw.get("name")
    try:
        if name in skill_files:
            raise InvalidProposal(f"skills/{name} is an existing file, not a skill folder")
        if name != raw_name:
            proposal.notes.append(f"name {str(raw_name)[:80]!r} normalised to {name!r}")
        if isinstance(request, CreateSkill):
            _create(proposal, request, skill_files, round_number)
        elif isinstance(request, RetireSkill):
            _retire(proposal, skill_files)
        elif isinstance(request, DescribeSkill):
            _describe(proposal, request, skill_files, round_number)
        else:
            _patch(proposal, request, skill_files, round_number)
    except InvalidProposal as exc:
        exc.action, exc.name, exc.rationale = request.action, name, request.rationale
        raise
    return proposal


def _skill_md(request: CreateSkill, notes: list[str]) -> str:
    """The proposal's SKILL.md: given whole, or built from its description and three sections."""
    if request.whole:
        return request.skill_md
    if request.skill_md:
        notes.append("`skill_md` has no front matter: SKILL.md is built from description and the three sections")
    front = yaml.safe_dump(
        {"name": request.name, "description": " ".join(request.description.split())},
        sort_keys=False,
        allow_unicode=True,
        width=1000,
    ).strip()
    sections = "\n\n".join(f"## {title}\n{getattr(request, key).strip()}" for key, title in SKILL_PARTS.items())
    return f"---\n{front}\n---\n\n{sections}\n"


def _checked_skill(text: str, name: str, round_number: int) -> str:
    try:
        text = with_front_matter(text, name, {"wikiskill-round": str(round_number)})
    except ValueError as exc:
        raise InvalidProposal(f"SKILL.md: {exc}") from None
    except RecursionError:  # PyYAML recurses once per nesting level
        raise InvalidProposal("SKILL.md: front matter is nested too deeply") from None
    problems = skill_problems(text, name)
    if problems:
        raise InvalidProposal(f"SKILL.md breaks the Agent Skills rules: {'; '.join(problems)}")
    return text


def _create(proposal: Proposal, request: CreateSkill, skill_files: dict[str, str], round_number: int) -> None:
    name = request.name
    if f"{name}/SKILL.md" in skill_files:
        proposal.notes.append(f"skill {name!r} exists: this create rewrites it")
    skill_md = _checked_skill(_skill_md(request, proposal.notes), name, round_number)
    purpose = request.purpose_md.strip() or f"# {name}\n\n## Origin\n\nProposed in round {round_number}."
    verb = "rewritten" if f"{name}/SKILL.md" in skill_files else "created"
    proposal.changes = {
        f"{skill_dir(name)}/SKILL.md": skill_md,
        f"{skill_dir(name)}/PURPOSE.md": add_history(
            purpose, round_number, f"{verb}: {proposal.rationale or 'no rationale given'}"
        ),
    }


def _patch(proposal: Proposal, request: PatchSkill, skill_files: dict[str, str], round_number: int) -> None:
    name = request.name
    if f"{name}/SKILL.md" not in skill_files:
        raise InvalidProposal(f"cannot patch {name!r}: no such skill (create it instead)")
    proposal.notes += request.dropped
    texts = {file: skill_files.get(f"{name}/{file}", "") for file in PATCHABLE}
    applied = 0
    for file in PATCHABLE:
        edits = [edit for edit in request.edits if edit.file == file]
        if not edits:
            continue
        texts[file], skipped = apply_edits(texts[file], edits)
        proposal.notes += [f"{file}: {reason}" for reason in skipped]
        applied += len(edits) - len(skipped)
    if not applied:
        raise InvalidProposal(f"no edit applied ({'; '.join(proposal.notes[-3:]) or 'no valid edits'})")
    for file in PATCHABLE:
        if len(texts[file]) > MAX_SKILL_CHARS:
            raise InvalidProposal(f"the patched {file} is longer than {MAX_SKILL_CHARS} characters")
    proposal.changes = {
        f"{skill_dir(name)}/SKILL.md": _checked_skill(texts["SKILL.md"], name, round_number),
        f"{skill_dir(name)}/PURPOSE.md": add_history(
            texts["PURPOSE.md"] or f"# {name}\n", round_number, f"patched: {proposal.rationale or 'no rationale given'}"
        ),
    }


def _describe(proposal: Proposal, request: DescribeSkill, skill_files: dict[str, str], round_number: int) -> None:
    name = request.name
    if f"{name}/SKILL.md" not in skill_files:
        raise InvalidProposal(f"cannot describe {name!r}: no such skill (create it instead)")
    try:
        text = with_description(skill_files[f"{name}/SKILL.md"], request.description)
    except ValueError as exc:
        raise InvalidProposal(f"SKILL.md: {exc}") from None
    purpose = skill_files.get(f"{name}/PURPOSE.md") or f"# {name}\n"
    proposal.changes = {
        f"{skill_dir(name)}/SKILL.md": _checked_skill(text, name, round_number),
        f"{skill_dir(name)}/PURPOSE.md": add_history(
            purpose, round_number, f"described: {proposal.rationale or 'no rationale given'}"
        ),
    }


def _retire(proposal: Proposal, skill_files: dict[str, str]) -> None:
    """Remove the skill's whole folder (it stays in history and in skill-impact.md)."""
    prefix = f"{proposal.name}/"
    if f"{prefix}SKILL.md" not in skill_files:
        raise InvalidProposal(f"cannot retire {proposal.name!r}: no such skill")
    proposal.changes = {f"skills/{path}": None for path in skill_files if path.startswith(prefix)}
