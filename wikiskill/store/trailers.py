"""The machine-readable part of every harness commit: `Wikiskill-*` git trailers as one typed model.

Steps, decisions and trailer keys are enums and fields here, never string literals spread over
modules; the history readers (evolve, reports, rollback, show) parse commits back into `Trailers`.

The trailers are the workspace's database, so they have a schema version (`Wikiskill-Schema`,
written on every commit; a commit without one is version 1) and are read strictly: a commit of a
newer schema stops every command with "upgrade wikiskill", and a key or value this version does
not know is an error rather than dropped, because a dropped step or fingerprint silently re-runs
rounds and loses incumbents. A version that renames or drops a step, a decision or a key bumps
`SCHEMA_VERSION` and maps the older names when it parses an older commit; one that only adds a key
or a value needs no bump (an older wikiskill stops at it and asks to be upgraded). The golden
workspace in tests/golden/ is the proof that every version still reads the first schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import Enum, StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import SchemaError
from ..loop.settings import CostRule, CostUnit
from ..roles.settings import Role
from .subjects import subject_and_body

PREFIX = "Wikiskill-"
SCHEMA_VERSION = 1
"""The trailer schema this wikiskill writes, and the newest it reads."""
ROLE_KEY = re.compile(r"Cost-[A-Za-z]+-USD|Tokens-[A-Za-z]+|Cached-[A-Za-z]+")
"""The per-role trailers (`Cost-<Role>-USD`, `Tokens-<Role>`, `Cached-<Role>`), keys beyond the fields."""
POLICY_KEY = re.compile(r"Policy-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
"""A gate policy's setting of its own (`Policy-Min-Fixed` for `gate.min_fixed`), which the policy
says it records (`GatePolicy.trailers`), the other keys beyond the fields."""


class Step(StrEnum):
    """What a harness commit did."""

    BASELINE = "baseline"
    """Main's skills evaluated before round 1 (round 0, tagged `baseline`). Workspaces written
    before `incumbent` existed record a round's re-validation as `baseline` too."""
    INCUMBENT = "incumbent"
    """Main's skills evaluated again in a round: main or the evaluation setup changed."""
    ROLLOUT = "rollout"
    MAINTAIN = "maintain"
    CONSOLIDATE = "consolidate"
    PROPOSE = "propose"
    REAPPLY = "reapply"
    VALIDATE = "validate"
    CONFIRM = "confirm"
    GATE = "gate"
    ROLLBACK = "rollback"
    HUMAN = "human"
    INGEST = "ingest"
    UPLIFT = "uplift"
    """`wikiskill uplift`: an arm's skills on `uplift/<arm>`, or the result on `uplift/results`."""
    TEST_LOOK = "test_look"
    """The sealed test split was scored (`eval --split test`, `uplift`), on the `test-looks` branch."""
    SETTINGS = "settings"
    """wikiskill.yaml as the next round runs under it, committed by `evolve` when it was edited
    since the last commit; the body holds the diff."""
    SOUNDNESS = "soundness"
    """The tasks left out of every split as unsound changed (`raw/soundness/unsound.json`)."""
    ADDED = "added"
    """A step of one's own that each round runs besides the built-in ones (`steps`)."""


class Action(StrEnum):
    """What a round's proposal asks for."""

    CREATE = "create"
    PATCH = "patch"
    DESCRIBE = "describe"
    """Rewrite an existing skill's front matter description only: what an agent that loads skills
    on demand reads to decide whether to load it."""
    RETIRE = "retire"
    """Remove a skill: a smaller prompt at an equal score is a gain, so the gate merges it when the
    candidate scores at least the incumbent."""
    NO_ACTION = "no_action"
    INVALID = "invalid"
    """The proposal could not be read as any of the others."""


class Decision(StrEnum):
    """The outcome of a round's proposal, or of a manual rollback."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    NO_ACTION = "no_action"
    INVALID = "invalid"
    INDECISIVE = "indecisive"
    PENDING = "pending"
    """`gate.review: human`: the policy accepted the candidate; it waits on `pending/rNNN-<name>`
    for a person's `wikiskill accept` or `wikiskill reject`."""
    ROLLED_BACK = "rolled_back"


class Parsed(StrEnum):
    """How a learning role's reply (the maintainer's pages, the proposer's proposal) was read."""

    FIRST = "first"
    """The first reply parsed."""
    REPAIRED = "repaired"
    """The first did not; the model was shown its parse error once and the second parsed."""
    GAVE_UP = "gave_up"
    """No reply parsed (or the call failed): the role did what it still could (no page, no proposal)."""


class Crossed(StrEnum):
    """Which boundary ended a sequential validation (`gate.policy: sequential`)."""

    EFFICACY = "efficacy"
    """The gain's statistic reached the look's upper boundary: accepted before the pool's end."""
    FUTILITY = "futility"
    """It fell below the look's lower boundary: a gain is out of reach; rejected early."""
    POOL_END = "pool_end"
    """The pool is used up: the fixed-n `paired` verdict at the level the earlier looks left."""


class SkillLoading(StrEnum):
    """How the task agent comes to a skill, which says what counting its loads can show."""

    ON_DEMAND = "on_demand"
    """It reads a skill when it decides to (a coding CLI's skill tool, a read of its SKILL.md):
    its transcript says which, so each skill has a trigger rate."""
    ALWAYS = "always"
    """Every skill is in its prompt on every task: always loaded, no rate to count."""
    UNSEEN = "unseen"
    """It records no skill it read (a Python runner): nothing to count."""


class Trailers(BaseModel):
    """Every trailer a harness commit may carry. Field aliases are the keys after `Wikiskill-`."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", use_enum_values=False)

    schema_version: int = Field(SCHEMA_VERSION, alias="Schema", ge=1)
    """The trailer schema the commit was written in (none written: 1)."""
    round: int | None = Field(None, alias="Round")
    step: Step | None = Field(None, alias="Step")
    status: str | None = Field(None, alias="Status")
    score: float | None = Field(None, alias="Score")
    decision: Decision | None = Field(None, alias="Decision")
    action: Action | None = Field(None, alias="Action")
    skill: str | None = Field(None, alias="Skill")
    incumbent: float | None = Field(None, alias="Incumbent")
    skills_id: str | None = Field(None, alias="Skills-Id")
    """What the task agent was given (see `evaluations.skills_id`)."""
    setup: str | None = Field(None, alias="Eval-Setup")
    """The evaluation setup: everything that decides a score except the skills."""
    fingerprint: str | None = Field(None, alias="Fingerprint")
    """The evaluation's id: its setup and its skills together."""
    results: str | None = Field(None, alias="Results")
    """Path of the per-task outcomes this commit's score was computed from."""
    incumbent_fingerprint: str | None = Field(None, alias="Incumbent-Fingerprint")
    policy: str | None = Field(None, alias="Policy")
    tasks: int | None = Field(None, alias="Tasks")
    mean_diff: float | None = Field(None, alias="Mean-Diff")
    interval: str | None = Field(None, alias="Interval")
    p_value: float | None = Field(None, alias="P-Value")
    fixed: int | None = Field(None, alias="Fixed")
    broken: int | None = Field(None, alias="Broken")
    infra: int | None = Field(None, alias="Infra")
    """Validation tasks left out of the comparison on both sides as infrastructure failures."""
    retried: int | None = Field(None, alias="Retried")
    """An evaluation: its task runs tried again after an infrastructure failure (`infra.retries`)."""
    retries: int | None = Field(None, alias="Retries")
    """An evaluation: the tries after the first that its task runs took, all together."""
    infra_left: int | None = Field(None, alias="Infra-Left")
    """An evaluation: its task runs still failing on infrastructure after every retry (unscored)."""
    look: int | None = Field(None, alias="Look")
    """`sequential`: the look (1, 2, ...) this validation or verdict is at."""
    pool: int | None = Field(None, alias="Pool")
    """`sequential`: the validation tasks it could use (`Tasks` is how many it used)."""
    batch: int | None = Field(None, alias="Batch")
    """`sequential`: the tasks added per look."""
    confidence: float | None = Field(None, alias="Confidence")
    """`sequential`: the confidence its boundaries were built for."""
    margin: float | None = Field(None, alias="Margin")
    """`sequential`: the gain it had to show (`gate.margin`)."""
    statistic: float | None = Field(None, alias="Statistic")
    """`sequential`: the look's standardised gain (z of the per-task differences)."""
    boundary: float | None = Field(None, alias="Boundary")
    """`sequential`: the boundary it crossed (or, while it continues, the upper one it did not)."""
    crossed: Crossed | None = Field(None, alias="Crossed")
    """`sequential`: which boundary ended the validation; absent while it continues."""
    cost_rule: CostRule | None = Field(None, alias="Cost-Rule")
    """`gate.cost` other than `ignore`: the rule the verdict was weighed by."""
    cost_unit: CostUnit | None = Field(None, alias="Cost-Unit")
    cost_candidate: float | None = Field(None, alias="Cost-Candidate")
    """The candidate's mean per-task cost on the tasks costed on both sides."""
    cost_main: float | None = Field(None, alias="Cost-Main")
    """Main's mean per-task cost on the same tasks."""
    cost_ratio: float | None = Field(None, alias="Cost-Ratio")
    cost_limit: float | None = Field(None, alias="Cost-Limit")
    """The ratio to main's cost the candidate's had to be shown below."""
    cost_p_value: float | None = Field(None, alias="Cost-P-Value")
    """The sign-flip test's p-value of "the cost is at least the limit"."""
    cost_confidence: float | None = Field(None, alias="Cost-Confidence")
    cost_tasks: int | None = Field(None, alias="Cost-Tasks")
    cost_passed: bool | None = Field(None, alias="Cost-Passed")
    """The cost was shown below the limit."""
    cost_decided: bool | None = Field(None, alias="Cost-Decided")
    """The cost turned the policy's verdict (a tie accepted as cheaper, a gain rejected as too costly)."""
    noninferiority: float | None = Field(None, alias="Noninferiority")
    """`tiebreak`: how much lower the score could be (`gate.noninferiority`)."""
    score_floor: float | None = Field(None, alias="Score-Floor")
    """`tiebreak`: the one-sided lower bound of the score gain its non-inferiority test found."""
    alpha: float | None = Field(None, alias="Alpha")
    """`gate.alpha_budget`: the significance level this verdict ran at, its share of the budget."""
    alpha_spent: float | None = Field(None, alias="Alpha-Spent")
    """`gate.alpha_budget`: the budget spent by this verdict and those before it."""
    alpha_left: float | None = Field(None, alias="Alpha-Left")
    """`gate.alpha_budget`: the budget left for the verdicts after it."""
    incumbent_results: str | None = Field(None, alias="Incumbent-Results")
    """`sequential`: path of main's per-task outcomes on the same tasks."""
    skill_loading: SkillLoading | None = Field(None, alias="Skill-Loading")
    """`gate` of a create, patch or describe: how the task agent comes to the changed skill."""
    skill_loads: int | None = Field(None, alias="Skill-Loads")
    """`gate`, `Skill-Loading: on_demand`: the validation runs whose agent loaded the changed skill."""
    skill_runs: int | None = Field(None, alias="Skill-Runs")
    """`gate`, `Skill-Loading: on_demand`: the validation runs counted (scored tasks times repeats)."""
    never_loaded: bool | None = Field(None, alias="Never-Loaded")
    """`gate`: the candidate scored higher, but its agent never loaded the changed skill during
    validation: the gain did not come from the skill."""
    reads: int | None = Field(None, alias="Reads")
    sampled: str | None = Field(None, alias="Sampled")
    attempts: int | None = Field(None, alias="Attempts")
    wiki_tokens: int | None = Field(None, alias="Wiki-Tokens")
    """Tokens of wiki text shown to the maintainer."""
    parsed: Parsed | None = Field(None, alias="Parsed")
    """`maintain`, `propose`: how the role's reply was read (first time, repaired, given up)."""
    prompt_budget: int | None = Field(None, alias="Prompt-Budget")
    """`maintain`: the prompt tokens the server's measured speed answers in the time a call is
    allowed, when the prompt was cut to them (fewer traces, shorter excerpts)."""
    refused: int | None = Field(None, alias="Refused")
    """Maintainer pages refused by the page model (listed in the commit body)."""
    merged: int | None = Field(None, alias="Merged")
    retired: int | None = Field(None, alias="Retired")
    reverts: str | None = Field(None, alias="Reverts")
    """Comma-separated ids of the merge commits a rollback reverts."""
    decided_by: str | None = Field(None, alias="Decided-By")
    """`person`: the decision is a person's (`wikiskill accept`, `wikiskill reject`)."""
    candidate: str | None = Field(None, alias="Candidate")
    """The commit id of the pending candidate a person decided on (its evidence commit)."""
    test_looks: int | None = Field(None, alias="Test-Looks")
    """`test_look`: how many times the test split has been looked at, this look included."""
    cost_usd: float | None = Field(None, alias="Cost-USD")
    tokens: int | None = Field(None, alias="Tokens")

    @classmethod
    def parse(cls, raw: dict[str, str]) -> Trailers:
        """Read `{"Wikiskill-Key": value}`; SchemaError for a newer schema, an unknown key or a
        value that does not fit its field."""
        values = {key[len(PREFIX) :]: value for key, value in raw.items() if key.startswith(PREFIX)}
        schema = values.get("Schema", "1")
        if not (schema.isascii() and schema.isdigit()) or int(schema) < 1:
            raise SchemaError(f"{PREFIX}Schema: {schema!r} is not a schema version")
        if int(schema) > SCHEMA_VERSION:
            raise SchemaError(
                f"written by a newer wikiskill (trailer schema {schema}; this one reads up to "
                f"{SCHEMA_VERSION}): upgrade wikiskill (pip install -U wikiskill)"
            )
        unknown = sorted(key for key in values if key not in _FIELD_KEYS and not _EXTRA_KEY.fullmatch(key))
        if unknown:
            raise SchemaError(
                f"{PREFIX}{unknown[0]} is not a trailer of schema {schema} (upgrade wikiskill if a newer one wrote it)"
            )
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            error = exc.errors()[0]
            key = str(error["loc"][0])
            raise SchemaError(
                f"{PREFIX}{key}: {values.get(key)!r} does not fit schema {schema} ({error['msg']}; "
                "upgrade wikiskill if a newer one wrote it)"
            ) from None

    def lines(self) -> list[str]:
        """`Wikiskill-Key: value` lines in field order, then the extra (per-role) ones."""
        out = []
        for name, field in type(self).model_fields.items():
            value = getattr(self, name)
            if value is not None:
                out.append(f"{PREFIX}{field.alias}: {_text(value)}")
        out += [
            f"{PREFIX}{key}: {_text(value)}" for key, value in (self.model_extra or {}).items() if value is not None
        ]
        return out

    @property
    def reverted(self) -> list[str]:
        return [sha for sha in (self.reverts or "").split(",") if sha]

    @property
    def role_costs(self) -> dict[str, float]:
        """USD per role from the `Cost-<Role>-USD` trailers."""
        return {role: float(value or 0) for role, value in self._per_role("Cost-", "-USD").items()}

    @property
    def role_tokens(self) -> dict[str, int]:
        """Tokens per role from the `Tokens-<Role>` trailers."""
        return {role: int(value or 0) for role, value in self._per_role("Tokens-").items()}

    @property
    def role_cached(self) -> dict[str, int]:
        """Prompt tokens read from the provider's cache per role, from the `Cached-<Role>` trailers
        (written only where a provider reported some)."""
        return {role: int(value or 0) for role, value in self._per_role("Cached-").items()}

    @property
    def policy_settings(self) -> dict[str, str]:
        """The gate policy's settings of its own by name, as recorded (`policy_keys`)."""
        return {
            key.removeprefix("Policy-").replace("-", "_").lower(): str(value)
            for key, value in (self.model_extra or {}).items()
            if POLICY_KEY.fullmatch(key)
        }

    def _per_role(self, prefix: str, suffix: str = "") -> dict[str, str]:
        return {
            key[len(prefix) : len(key) - len(suffix)].lower(): value
            for key, value in (self.model_extra or {}).items()
            if key.startswith(prefix) and key.endswith(suffix) and ROLE_KEY.fullmatch(key)
        }


_FIELD_KEYS = frozenset(field.alias for field in Trailers.model_fields.values())
_EXTRA_KEY = re.compile(f"{ROLE_KEY.pattern}|{POLICY_KEY.pattern}")


def policy_keys(settings: Mapping[str, object]) -> dict[str, str]:
    """A gate policy's settings of its own (`min_fixed: 2`) as trailers (`Policy-Min-Fixed: 2`),
    which `Trailers.policy_settings` reads back."""
    return {
        "Policy-" + "-".join(part.title() for part in name.split("_")): _text(value) for name, value in settings.items()
    }


def role_keys(role: Role) -> tuple[str, str]:
    """The role's `Cost-<Role>-USD` and `Tokens-<Role>` keys (`role_costs` reads the first back)."""
    return f"Cost-{role.title()}-USD", f"Tokens-{role.title()}"


def role_cached_key(role: Role) -> str:
    """The role's `Cached-<Role>` key (`role_cached` reads it back)."""
    return f"Cached-{role.title()}"


def _text(value: object) -> str:
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}"
    return str(value)


def format_message(subject: str, trailers: Trailers | dict[str, object], body: str = "") -> str:
    """A commit message: one subject line, an optional body, then the trailer block (a dict is
    read by trailer key, `{"Round": 1, "Step": "human"}`, and validated like any `Trailers`).
    A subject too long for git's one-line views is cut where a clause ends, and what was cut is
    kept in the body."""
    if not isinstance(trailers, Trailers):
        trailers = Trailers.model_validate(trailers)
    short, body = subject_and_body(subject.strip().splitlines()[0] if subject.strip() else "wikiskill", body)
    lines = [short, ""]
    if body:
        lines += [body, ""]
    lines += trailers.lines()
    return "\n".join(lines) + "\n"
