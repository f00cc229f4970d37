"""wikiskill.yaml as pydantic models. Every field's docstring is its documentation; reading the
file (and checking the benchmark it names) is `store.settings`."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from .errors import ConfigError, ConfigProblem, did_you_mean
from .parts import (
    EXECUTOR,
    GATE_POLICY,
    LOCAL_EXECUTOR,
    PROCESS_POOL,
    ROUND_STEP,
    TASK_AGENT,
    TASK_RUNNER,
)
from .registry import import_class

CONFIG_FILE = "wikiskill.yaml"
OFFLINE_MODEL = "offline"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Role(StrEnum):
    """Who calls a model: each has its section of wikiskill.yaml, its meter and its cost trailers."""

    AGENT = "agent"
    MAINTAINER = "maintainer"
    PROPOSER = "proposer"
    JUDGE = "judge"


class ToolProtocol(StrEnum):
    """How a role's model calls tools."""

    NATIVE = "native"
    TEXT = "text"
    AUTO = "auto"
    BASH_BLOCK = "bash_block"


class EditFormat(StrEnum):
    """How the workdir agent takes file edits that a reply writes as text (Aider's edit formats)."""

    TOOLS = "tools"
    WHOLE = "whole"
    DIFF = "diff"
    AUTO = "auto"


class StructuredOutput(StrEnum):
    """Whether a role that needs JSON sends its schema as `response_format`."""

    JSON_SCHEMA = "json_schema"
    OFF = "off"
    AUTO = "auto"


class CacheBreakpoints(StrEnum):
    """Where a request marks prompt-cache breakpoints (`cache_control`)."""

    AUTO = "auto"
    ALWAYS = "always"
    OFF = "off"


class RoleSettings(_Section):
    model: str | None = None
    """litellm model string for this role (e.g. `openai/gpt-4o-mini`); empty = the top-level `model`."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server for this role; empty = the top-level `api_base`."""
    temperature: float = 0.0
    """Sampling temperature."""
    max_tokens: int | None = None
    """Cap on completion tokens per call; empty = the provider's default (for a model litellm does
    not know, e.g. on a local server, a quarter of the context window, at most 2048, down to 512
    when a request would not fit otherwise)."""
    tool_protocol: ToolProtocol = ToolProtocol.AUTO
    """How the role calls tools: `native` tool calls; `text` (the tools and their JSON schemas are
    described in the prompt and a call is a JSON object `{"name": ..., "arguments": ...}` in the
    reply, bare, fenced or in a `<tool_call>` block); `auto` sends native tools and switches to
    `text` once the model writes a call as text, answers a turn that needs a call without a
    native one, or its server rejects tools; `bash_block` (the task agent on a workdir suite
    only, mini-swe-agent's protocol) offers no tools: each reply's one ```bash block is the
    command to run, its output comes back as the next message, and a reply without exactly one
    block gets a message saying so (docs/agents.md)."""
    response_format: StructuredOutput = StructuredOutput.AUTO
    """JSON replies (the maintainer's): `json_schema` sends the reply's JSON schema as
    `response_format`; `off` never does; `auto` sends it when litellm says the model supports it or
    to an `api_base` server, and stops sending it when the server rejects it."""
    context_window: int | None = Field(None, ge=1024)
    """Tokens the model accepts per request; empty = litellm's model info, else 8192. Requests
    (tools' schemas included) are fitted into it: older tool results shortened first, then the
    longest sections cut, then the oldest tool turns dropped, then sections cut further."""


def _runner_class(name: str) -> Any:
    """The class of the kind of runner `name` (a `contracts.runners.TaskRunner`, which core and
    store may not import: read through its members); ValueError when it cannot be imported."""
    try:
        return import_class(TASK_RUNNER.path(name))
    except ImportError as exc:
        raise ValueError(f"cannot import the agent runner {name!r}: {exc}") from exc


def runner_kind(value: str) -> str:
    """The name of the kind of runner (`TASK_RUNNER`) that claims the `agent.runner` value `value`:
    the first whose `claim` takes it, built-ins before plugins; ValueError naming what each takes."""
    described = []
    for name in TASK_RUNNER.names():
        kind = _runner_class(name)
        if kind.claim(value) is not None:
            return name
        described.append(str(kind.described()))
    raise ValueError(f"{value!r} is no agent runner ({', '.join(described)})")


def runner_class(value: str) -> Any:
    """The class of the kind of runner that claims the `agent.runner` value `value`, for the layers
    below `contracts` (the settings' check of the suite); above them, `contracts.runners.runner_of`
    gives it typed."""
    return _runner_class(runner_kind(value))


class Sandbox(StrEnum):
    """What a CLI task agent runs inside."""

    NONE = "none"
    BWRAP = "bwrap"


class AgentSettings(RoleSettings):
    runner: str = TASK_RUNNER.default
    """Who plays the tasks: `builtin` (wikiskill's own agents); `python:MODULE:FUNCTION`, your
    own callable (a module installed or on `PYTHONPATH`), or `python:NAME` for a callable
    registered under the `wikiskill.agents` entry-point group (it gets one `AgentRun`: the task,
    the skills as a prompt block and as Agent Skills folders, a fresh workdir, the model
    settings, and returns the answer); a coding-agent CLI run headless on each task in a folder
    and HOME of its own: `qwen-code`, `claude-code`, `codex`, `gemini-cli`, `command` (any CLI,
    by `command`), or the dotted path of a preset class of your own (`package.module:Class`).
    Runners other than `builtin` play QA and task-folder (`tasks:PATH`) suites. See docs/agents.md."""
    kind: str | None = None
    """The `builtin` runner's LLM agent, by its name among the task agents (`wikiskill` lists the
    built-ins; a plugin registers its own under the `wikiskill.task_agents` entry-point group) or
    the dotted path of a class (`package.module:Class`); unset: the built-in agent that plays the
    suite's kind (QA, interactive, tool use or workdir)."""
    max_steps: int = Field(30, ge=1)
    """Interactive agents: the most actions in one episode; tool-use agents: the most replies to
    one user message; a CLI runner: its turn limit, when the CLI has one.
    `wikiskill init` writes the suite's own limit (40 for the TextWorld suites)."""
    timeout_s: float = Field(600.0, gt=0)
    """A CLI runner: the most seconds one task may take; a task over it fails with that reason
    and the CLI's whole process tree is killed."""
    sandbox: Sandbox = Sandbox.NONE
    """A CLI runner: `none` runs the CLI with your own rights (it can read and write whatever you
    can, its own folders aside); `bwrap` runs it under bubblewrap with only its task folder and
    private HOME writable, the rest of the machine read-only and your home hidden."""
    command: list[str] = Field(default_factory=list)
    """`runner: command`: the CLI's argv, each item a template with `{prompt}`, `{workdir}`,
    `{home}`, `{model}`, `{api_base}`, `{api_key}`, `{max_turns}` and `{skills_dir}`
    (e.g. `[mycli, --model, "{model}", "{prompt}"]`); its stdout is the transcript."""
    edit_format: EditFormat = EditFormat.AUTO
    """The built-in workdir agent: how a reply may change files besides its commands. `tools`: only
    by tool calls (`bash`); `whole`: a fenced block holding a file's full new content, the file
    named on the line before the fence (or, when the task names one file, that file); `diff`:
    SEARCH/REPLACE blocks, the file named on the line before; `auto`: a reply's tool calls when it
    makes any, else its SEARCH/REPLACE blocks, else its whole-file blocks. Such an edit changes
    only a file the task gave (or a new one the task names), inside the task's sandbox, is
    answered with its diff as a tool result would be, and is recorded in the trace (docs/agents.md)."""
    wiki_access: bool = False
    """Give the task agent a `read_wiki` tool over main's active pattern pages (the paper's
    wiki-access ablation); the pages then enter the evaluation fingerprint."""

    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, value: object) -> str | None:
        return None if value is None else TASK_AGENT.check(value)

    @field_validator("runner", mode="before")
    @classmethod
    def _known_runner(cls, value: object) -> str:
        text = str(value).strip()
        return str(runner_class(text).claim(text))

    @model_validator(mode="after")
    def _runner_settings(self) -> AgentSettings:
        if "runner" in self.model_fields_set:  # the default runner reads none of the others' settings
            runner_class(self.runner).check_settings(self)
        if self.tool_protocol == ToolProtocol.BASH_BLOCK and self.wiki_access:
            raise ValueError(
                "tool_protocol: bash_block offers no tools, so no read_wiki: set wiki_access: false "
                "or another tool_protocol"
            )
        return self


class MaintainerSettings(RoleSettings):
    enabled: bool = True
    """`false` skips the maintain step: no wiki is written and the proposer reads traces only
    (the paper's no-wiki ablation)."""
    wiki_token_budget: int = Field(6000, ge=200)
    """The most tokens (about 4 characters each) of index lines, pages and log the maintainer is
    shown; the pages most relevant to the sampled traces (BM25) come first."""


class WikiSettings(_Section):
    consolidate_every: int = Field(5, ge=0)
    """Every this many rounds, a `consolidate` step merges duplicate pages and retires stale
    ones; 0 = never."""
    retire_after: int = Field(10, ge=1)
    """A page with no new evidence for this many rounds is retired by consolidation."""
    duplicate_similarity: float = Field(0.6, gt=0, le=1)
    """Consolidation merges two pages of the same kind whose word sets (title, summary, root
    cause, fix) overlap at least this much (Jaccard)."""


class ProposerSettings(RoleSettings):
    max_turns: int = Field(20, ge=1)
    """The most tool-calling turns the proposer gets before it must finish."""
    min_trace_reads: int = Field(4, ge=0)
    """Traces the proposer must read before `finish` is accepted."""
    kept_results_tokens: int | None = Field(4000, ge=0)
    """Tool results the proposer has already answered stay in its prompt until they pass this
    many tokens (about 3.2 characters each); then all of them are replaced at once by short stubs
    that name the call reading them again, so each turn's prompt stays near flat and its cached
    prefix changes rarely. The transcript in raw/ keeps every result. Empty: never stubbed."""


class JudgeSettings(RoleSettings):
    samples: int = Field(1, ge=1)
    """Verdicts asked per task and averaged: a judge is itself noisy, and averaging several
    verdicts narrows what a candidate must beat by luck (each is one more call)."""


class SkillsMode(StrEnum):
    """How skills reach the task agent (`skills.mode`, `wikiskill prompt --mode`, a host's `SkillSet`)."""

    FULL = "full"
    INDEX = "index"
    RETRIEVE = "retrieve"


class ReviewMode(StrEnum):
    """Who has the last word on a candidate the gate policy accepts (`gate.review`)."""

    AUTO = "auto"
    """The gate merges it."""
    HUMAN = "human"
    """It waits as `pending/rNNN-<name>` for `wikiskill accept` or `wikiskill reject`."""


class SkillsSettings(_Section):
    mode: SkillsMode = SkillsMode.FULL
    """How skills reach the task agent: every skill's name, description and body (`full`), names +
    descriptions with bodies on demand through a `load_skill` tool (`index`), or the top-k relevant
    to the task by BM25 (`retrieve`)."""
    top_k: int = Field(3, ge=1)
    """`retrieve` mode: how many skills to include."""
    token_budget: int = Field(4000, ge=100)
    """`retrieve` mode: the most tokens (about 4 characters each) of skill text to include."""
    max_tokens: int | None = Field(None, ge=1)
    """The most tokens (about 4 characters each) the skills block may take: a proposal that would
    grow it past this is refused before validation, so the proposer must retire a skill first
    (skills the last `wikiskill uplift` showed no value for are listed to it as candidates).
    Empty: no bound."""
    leak_run: int = Field(8, ge=0)
    """Held-out text kept out of skills: a proposal whose skill files share a run of this many words
    with a val or test task's question, answer, instructions or hidden test files is `invalid`
    before any val task runs, naming the run; `lint`, `watch` and `ingest` say the same of a
    person's edit or a session (runs the train tasks share, or three or more held-out tasks, are
    templates and left out; interactive suites are not checked). 0: no check."""
    locked: list[str] = []
    """Skills the proposer may not patch or retire (such a proposal is refused before validation)
    and `rollback` reverts only with `--force`; `wikiskill lock NAME` and `unlock NAME` edit it."""

    def with_mode(self, mode: str | None) -> SkillsSettings:
        """These settings in `mode` (any case; None keeps `mode`); ConfigError in one line naming the modes."""
        if mode is None:
            return self
        try:
            chosen = SkillsMode(str(mode).strip().lower())
        except ValueError:
            modes = [member.value for member in SkillsMode]
            raise ConfigError(f"unknown skills mode {mode!r}: use {', '.join(modes[:-1])} or {modes[-1]}") from None
        return self.model_copy(update={"mode": chosen})


class SamplingSettings(_Section):
    max_failures: int = Field(5, ge=0)
    """Failed traces given to the maintainer each round."""
    max_successes: int = Field(3, ge=0)
    """Successful traces given to the maintainer each round."""
    max_chars: int = Field(15_000, ge=500)
    """Each sampled trace is cut to this many characters."""
    seed: int = 0
    """Seed of the trace sampler (mixed with the round number)."""


class BudgetSettings(_Section):
    max_usd: float | None = Field(None, ge=0)
    """Stop cleanly between tasks once the run has spent this much (USD), and start no round whose
    estimate (`wikiskill estimate`) would take the run past it; empty = no limit."""
    max_calls: int | None = Field(None, ge=0)
    """Stop cleanly once the run has made this many model calls; empty = no limit."""
    judge_share: float | None = Field(None, gt=0, le=1)
    """The most of `max_usd` the judge of a judged suite may spend in one command (0.25 = a
    quarter); once it has, the command stops cleanly as at `max_usd`; empty = no limit of its own."""


class LLMSettings(_Section):
    retries: int = Field(4, ge=0)
    """Retries of a call after a rate limit, connection or server error (backoff with jitter,
    honouring Retry-After); authentication, permission, unknown-model and bad-request errors fail
    at once."""
    timeout: float = Field(120.0, gt=0)
    """Seconds before one model call times out; a timed-out call is retried once, with twice the
    time, and a second timeout is final. Once a server's speed is measured (a slow local server),
    a call it needs longer for gets twice its expected time (prompt and a full reply), up to ten
    times this."""
    cache: bool = False
    """Keep an on-disk cache of replies at temperature 0 in `.wikiskill/` (a re-run is then free
    and reproducible)."""
    cache_breakpoints: CacheBreakpoints = CacheBreakpoints.AUTO
    """Provider prompt caching: requests mark the end of the system prompt (the tools come before
    it) and the end of the conversation as cache breakpoints (`cache_control`), so the next turn
    reads the prompt so far from the provider's cache. `auto` marks them where litellm says the
    provider needs marks (Anthropic's Claude, also on Bedrock, Vertex AI and Azure AI; OpenAI-style
    providers cache a repeated prefix by themselves); `always` marks every request (an
    OpenAI-compatible proxy in front of Claude); `off` never does."""


class CostRule(StrEnum):
    """How the gate weighs what a candidate costs per val task (`gate.cost`; docs/gate.md)."""

    IGNORE = "ignore"
    """On score alone."""
    TIEBREAK = "tiebreak"
    """A candidate no worse than main that is shown cheaper by `cost_margin` is accepted too."""
    BOUND = "bound"
    """A score gain is accepted only when the cost is shown to grow by at most `max_cost_increase`."""


class CostUnit(StrEnum):
    """What a val task's cost is counted in (`gate.cost_unit`)."""

    TOKENS = "tokens"
    USD = "usd"
    """The priced cost, where the model has a price."""


Own = TypeVar("Own", bound=BaseModel)


def policy_class(name: str) -> type | None:
    """The class `gate.policy` names, None when it cannot be imported (loading it for the gate
    says why); what it declares of itself (`contracts.gate.GatePolicy`) decides its settings."""
    try:
        return import_class(GATE_POLICY.path(name))
    except (ImportError, ValueError):
        return None


def _has_level(name: str) -> bool:
    return bool(getattr(policy_class(name), "has_level", False))


class GateSettings(_Section):
    policy: Annotated[str, GATE_POLICY] = GATE_POLICY.default
    """How much evidence a merge needs: `strict` (the paper's rule: candidate mean > incumbent
    mean, compared exactly), `paired` (the tasks show, at `confidence`, a mean per-task gain
    above `margin`), `confirm` (strict, then strict again on a fresh evaluation with new seeds),
    `no_regression` (strict, losing at most `max_broken` tasks main solved) or `sequential`
    (`paired`'s evidence, gathered `batch` tasks at a time: it stops as soon as a
    group-sequential test can accept or rule out a gain; docs/gate.md); or the dotted
    path of a class of your own following `protocols.GatePolicy`, e.g. `mypkg.gates:MyPolicy`
    (an installed module or one on `PYTHONPATH`)."""
    confidence: float = Field(0.95, gt=0.5, lt=1.0)
    """`paired`, `sequential`: confidence level of the interval (1 - the tests' significance
    level); `sequential` keeps its false-merge rate over all its looks at most 1 - this."""
    margin: float = Field(0.0, ge=0.0)
    """`paired`, `sequential`: the mean per-task gain the candidate must be shown to exceed: the lower bound
    of the one-sided `confidence` interval of the gain must be above it (not the point
    estimate), on pass/fail and graded scores alike."""
    batch: int = Field(10, ge=1)
    """`sequential`: validation tasks added per look (the val split, `splits.val` tasks, is the
    pool; its order is the order of the batches). A pool no larger than one batch is one look:
    `paired` at `confidence`."""
    max_broken: int = Field(0, ge=0)
    """`no_regression`: the most validation tasks that main solved the candidate may lose."""
    repeats: int = Field(1, ge=1)
    """Evaluate every validation task this many times (seeds `seed` ... `seed+N-1`) and average per
    task: for agents that are not deterministic (temperature above 0)."""
    seed: int = 0
    """Seed of the bootstrap and permutation resampling of `paired` and of `sequential`'s last look
    (on scores that are not pass/fail)."""
    max_infra_share: float = Field(0.10, ge=0.0, le=1.0)
    """The largest share of a validation's tasks that may fail as infrastructure (a check that
    crashed or wrote no result, an image that would not build) on either side: such tasks are
    left out of the comparison on both sides; past this share the validation is `indecisive`,
    never merged, and the next `evolve` retries it."""
    cost: CostRule = CostRule.IGNORE
    """How the per-task cost of the candidate's validation counts: `ignore` (score alone),
    `tiebreak` (a candidate not worse than main by `noninferiority` and cheaper by `cost_margin`
    is accepted; every test then runs at half the significance level, so the false-merge rate
    stays at 1 - `confidence`) or `bound` (a score gain is accepted only when the cost grows by at
    most `max_cost_increase`). docs/gate.md."""
    cost_unit: CostUnit = CostUnit.TOKENS
    """What a task's cost is counted in: `tokens` (every model call of the task agent) or `usd`
    (the priced cost, for priced models)."""
    noninferiority: float = Field(0.02, ge=0.0, lt=1.0)
    """`tiebreak`: how much lower a cheaper candidate's mean score may be: the one-sided lower bound
    of its gain must be above minus this (`strict`: the means must be equal)."""
    cost_margin: float = Field(0.1, ge=0.0, lt=1.0)
    """`tiebreak`: the share by which the per-task cost must be shown lower (0.1: at most 90% of
    main's)."""
    max_cost_increase: float = Field(0.1, ge=0.0)
    """`bound`: the share by which the per-task cost may grow with a score gain (0.1: at most 110%
    of main's), shown at `confidence`."""
    alpha_budget: float | None = Field(None, gt=0.0, lt=0.5)
    """The family-wise error of the whole run: the chance that any of its merges is of a change
    that does nothing, at most this over every round on one val split (`paired`, `sequential`
    or a policy of your own with a confidence level). Each verdict runs at its share of it (the
    online fallback rule, docs/gate.md) instead of at `confidence`; each gate commit records what
    it spent and what is left, and `audit` replays it. Empty: every round at `confidence`."""
    alpha_rounds: int = Field(20, ge=1)
    """`alpha_budget`: the verdicts over which 90% of the budget is spread evenly (the rest is
    halved for each verdict after them)."""
    review: ReviewMode = ReviewMode.AUTO
    """`auto`: a candidate the policy accepts is merged. `human`: it is kept as
    `pending/rNNN-<name>` with the gate's evidence, and evolution goes on; a person merges it with
    `wikiskill accept NAME` (validated again first when main moved) or turns it down with
    `wikiskill reject NAME --why TEXT`; `wikiskill review` lists the queue (docs/review.md)."""
    require_load: bool = False
    """An agent that loads skills on demand (a coding CLI): a candidate whose changed skill it
    never loaded during validation is rejected even when it scored higher (the gain did not
    come from the skill). False: such a gain is merged and flagged `never loaded`."""

    _own: dict[str, object] = PrivateAttr(default_factory=dict)
    """The chosen policy's settings of its own (`GatePolicy.Settings`), as written."""

    def own(self, model: type[Own]) -> Own:
        """The chosen policy's settings of its own, as its `Settings` model."""
        return model.model_validate(self._own)

    @model_serializer(mode="wrap")
    def _dump_own(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The settings of its own beside the section's, as wikiskill.yaml writes them, so a
        copy validated from a dump keeps them."""
        return {**handler(self), **self._own}

    def with_own(self, values: Mapping[str, object]) -> GateSettings:
        """A copy whose policy's settings of its own are `values`."""
        copy = self.model_copy()
        copy._own = dict(values)
        return copy

    @model_validator(mode="wrap")
    @classmethod
    def _policy_settings(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> GateSettings:
        """Keys the section does not hold that the chosen policy's `Settings` declares are its
        settings of its own, checked by that model; any other unknown key fails as usual."""
        if not isinstance(data, dict) or all(key in cls.model_fields for key in data):
            return handler(data)  # type: ignore[no-any-return]
        try:
            found = policy_class(GATE_POLICY.check(data.get("policy", GATE_POLICY.default)))
        except ValueError:
            found = None
        model = getattr(found, "Settings", None)
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return handler(data)  # type: ignore[no-any-return]
        own = {key: value for key, value in data.items() if key in model.model_fields and key not in cls.model_fields}
        settings: GateSettings = handler({key: value for key, value in data.items() if key not in own})
        model.model_validate(own)
        settings._own = own
        return settings

    @field_validator("policy", mode="before")
    @classmethod
    def _named_policy(cls, value: object) -> str:
        return GATE_POLICY.check(value)

    @model_validator(mode="after")
    def _budget_needs_a_level(self) -> GateSettings:
        if self.alpha_budget is not None and not _has_level(self.policy):
            levelled = ", ".join(name for name in GATE_POLICY.builtins if _has_level(name))
            raise ValueError(
                f"gate.alpha_budget needs a policy with a confidence level ({levelled}), not {self.policy}"
            )
        return self


class RaySettings(_Section):
    address: str | None = None
    """Ray cluster to run tasks on (`ray://HEAD:10001` or `HEAD:6379`); empty = the `RAY_ADDRESS`
    environment variable, else a local Ray started for the command and stopped after it."""
    num_cpus: int | None = Field(None, ge=1)
    """CPUs of a local Ray started for the command; empty = all of this machine's."""
    pip: list[str] = []
    """Packages Ray installs for the workers of a cluster (its runtime environment's `pip`), for
    nodes whose image lacks wikiskill's dependencies; empty = none. The wikiskill package and
    the workspace's files (without `.git` and `.wikiskill`) are always shipped to a cluster."""


class SplitSizes(_Section):
    train: int | None = Field(None, ge=1)
    """Number of train tasks of a generated suite; unset: the suite's default (`wikiskill benchmarks`
    lists them). Suites read from files (`jsonl:DIR`, `example-qa`) use their files."""
    val: int | None = Field(None, ge=1)
    """Number of validation tasks of a generated suite; unset: the suite's default."""
    test: int | None = Field(None, ge=1)
    """Number of test tasks of a generated suite; unset: the suite's default."""


class ContainerRuntime(StrEnum):
    """The container engine a Harbor suite's tasks run in, driven through its command line."""

    DOCKER = "docker"
    PODMAN = "podman"


class EnvironmentSettings(_Section):
    runtime: ContainerRuntime = ContainerRuntime.DOCKER
    """`docker` or `podman`: the command that builds a Harbor task's image and runs its container
    (Podman takes Docker's arguments)."""
    host_network: bool = False
    """Run every task's container on the host's network (`--network host`) instead of none (or
    the default network where a task says `allow_internet`). A model server listening on the
    host's loopback (`127.0.0.1`) is reachable from inside a container only this way; the
    built-in agent calls the model from wikiskill's own process and needs no network inside, a
    coding-agent CLI calls it from inside (without this, a loopback endpoint is refused)."""
    cache_dir: str | None = None
    """Where image build logs are kept; unset: `.wikiskill/images/` in the workspace."""


class HarborIds(_Section):
    train: list[str] = []
    """The train tasks' ids (task folder names)."""
    val: list[str] = []
    """The validation tasks' ids."""
    test: list[str] = []
    """The test tasks' ids; tasks named in no list are left out."""

    @property
    def given(self) -> bool:
        return bool(self.train or self.val or self.test)


class SuiteSkills(StrEnum):
    """What becomes of the skills a Harbor suite ships in a task's `environment/skills`."""

    REMOVE = "remove"
    """Left out of the image: the folder is built empty, so the agent starts with no skills but
    the evolved ones."""
    KEEP = "keep"
    """Built into the image as the task's Dockerfile says: the base the evolved skills add to."""


class HarborSettings(_Section):
    registry: str | None = None
    """The Harbor registry `harbor:NAME@VERSION` is looked up in: a registry.json's path or URL
    (`init --registry-path` / `--registry-url`); unset: Harbor's public registry."""
    dataset_digest: str | None = None
    """The digest of the registry entry `harbor:NAME@VERSION` was fetched from, set by `init`: the
    dataset is read from that entry's cache folder, and a registry whose entry has since changed
    is refused, never used in its place. Unset: the one entry of that name fetched here."""
    ids: HarborIds = HarborIds()
    """The split as explicit id lists; all empty: a seeded split stratified by each task's
    `[metadata] category`, of the sizes in `splits` (unset sizes: half train, a quarter val, the
    rest test)."""
    exclude: list[str] = []
    """Tasks left out of the suite before it is split: ids or glob patterns (`build-*`), as
    Harbor's `--exclude-task-name`."""
    split_seed: int = 0
    """The seed of the stratified split."""
    require_sound: bool = True
    """`evolve` first checks each task that has a reference solution (a Harbor task's
    solution/solve.sh, a task folder's solution/, scores 1, the untouched task 0; once per task
    digest) and leaves unsound ones out of every split, recorded with the reason in
    raw/soundness/unsound.json; false: every task stays."""
    reward_key: str | None = None
    """Which key of a verifier's `reward.json` is the score; unset: its key `reward`, else its
    only key (several keys and none named `reward` is an infrastructure failure naming them)."""
    force_build: bool = False
    """Build each task's image from its `environment/Dockerfile` even where task.toml pins an
    `[environment] docker_image`; unset, the pinned image is run (pulled when it is not here)."""
    suite_skills: SuiteSkills = SuiteSkills.REMOVE
    """`remove`: a task's `environment/skills` (the suite's curated skills, which SkillsBench's
    Dockerfiles copy into the agent's skills folders) is built empty, so a workspace's skills are
    the only ones the agent has and `none` means none; `keep`: built as the Dockerfile says, the
    base the evolved skills add to. Part of the evaluation fingerprint."""


class TelemetrySettings(_Section):
    otlp: str | None = None
    """OpenTelemetry traces of every `evolve`, `evaluate`, `compare` and `audit` to this OTLP/HTTP
    endpoint (`http://localhost:4318`; spans are posted to its `/v1/traces`): one trace per
    command, with a span per round, step, task, model call and tool call. Unset: traces go out
    only when OpenTelemetry's own variables name an endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`,
    `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); with neither, nothing of OpenTelemetry is imported.
    Needs `pip install 'wikiskill[otel]'`."""


class Tracking(StrEnum):
    """An experiment tracker an evolve run also logs its rounds to."""

    MLFLOW = "mlflow"
    """MLflow at `MLFLOW_TRACKING_URI` (docs/observability.md); needs `wikiskill[mlflow]`."""


class Config(_Section):
    benchmark: str
    """Task suite: any name `wikiskill benchmarks` lists (`textworld-cooking`, `textworld:<challenge>`,
    `reasoning-gym:<dataset>`, `scienceworld`, `bfcl`, `example-qa`, `jsonl:DIR`, a plugin's)."""
    model: str = OFFLINE_MODEL
    """Default litellm model string for every role; `offline` is the built-in no-LLM baseline."""
    api_base: str | None = None
    """Default base URL for an OpenAI-compatible server (local vLLM, Ollama, a proxy)."""
    concurrency: int = Field(4, ge=1)
    """Tasks run at the same time during rollout, validation and eval."""
    executor: Annotated[str, EXECUTOR] | None = None
    """Where tasks run: `local` (one event loop in this process), `processes` (a pool of
    `workers` processes started once per command, for when one process's CPU is the limit),
    `ray` (`workers` Ray actors, on a local Ray or the cluster of `ray.address`), or the dotted
    path of a class of your own following `protocols.Executor` (`mypkg.module:MyExecutor`);
    unset: `processes` when `workers` is above 1, else `local`. Results, the result cache and
    the budget stay with the command. A Python script using `processes` needs the
    `if __name__ == "__main__":` guard."""
    workers: int = Field(1, ge=1)
    """Worker processes (`processes`) or Ray actors (`ray`) that share `concurrency`, each with
    its own event loop; `local` runs one (a larger value with `executor: local` is refused; with
    `executor` unset it means `processes`)."""
    seed: int = 0
    """Seed of the offline agent and of generated benchmarks' play."""
    splits: SplitSizes = SplitSizes()
    """Split sizes of generated benchmarks."""
    agent: AgentSettings = AgentSettings()
    """The task agent."""
    maintainer: MaintainerSettings = MaintainerSettings()
    """The wiki maintainer."""
    proposer: ProposerSettings = ProposerSettings()
    """The skill proposer."""
    judge: JudgeSettings = JudgeSettings()
    """The LLM judge of a task-folder suite scored by `judge` (docs/benchmarks.md); unused otherwise."""
    skills: SkillsSettings = SkillsSettings()
    """How skills are rendered into the task agent's system prompt."""
    gate: GateSettings = GateSettings()
    """What a candidate must show to be merged."""
    sampling: SamplingSettings = SamplingSettings()
    """Which traces the maintainer sees."""
    wiki: WikiSettings = WikiSettings()
    """Consolidation of the wiki."""
    budget: BudgetSettings = BudgetSettings()
    """Spending limits."""
    llm: LLMSettings = LLMSettings()
    """Retries, timeouts and caching of model calls."""
    ray: RaySettings = RaySettings()
    """The Ray cluster of `executor: ray`."""
    environment: EnvironmentSettings = EnvironmentSettings()
    """The containers a Harbor suite's tasks run in (docs/benchmarks.md)."""
    harbor: HarborSettings = HarborSettings()
    """How a Harbor suite (`harbor:PATH`) is split and its rewards read."""
    telemetry: TelemetrySettings = TelemetrySettings()
    """OpenTelemetry traces of a command (docs/observability.md)."""
    tracking: Tracking | None = None
    """Log each evolve run to an experiment tracker as well: `mlflow` (one MLflow run per
    workspace with a nested run per round, on the server `MLFLOW_TRACKING_URI` names); unset: none."""
    steps: list[Annotated[str, ROUND_STEP]] = []
    """Steps of your own each round runs besides its built-in ones, in this order: each a plugin's
    name (entry-point group `wikiskill.round_steps`) or a class's dotted path, following
    `wikiskill.loop.steps.AddedStep`, and run after the built-in step its `after` names."""

    @field_validator("executor", mode="before")
    @classmethod
    def _named_executor(cls, value: object) -> str | None:
        return None if value is None else EXECUTOR.check(value)

    @field_validator("steps", mode="before")
    @classmethod
    def _named_steps(cls, value: object) -> list[str]:
        if not isinstance(value, list):
            raise ValueError("a list of step names or dotted paths")
        return [ROUND_STEP.check(name) for name in value]

    @field_validator("tracking")
    @classmethod
    def _tracker_installed(cls, value: Tracking | None) -> Tracking | None:
        if value is Tracking.MLFLOW and importlib.util.find_spec("mlflow") is None:
            raise ValueError("mlflow needs MLflow: pip install 'wikiskill[mlflow]'")
        return value

    @model_validator(mode="after")
    def _local_runs_one_worker(self) -> Config:
        if self.workers > 1 and self.executor == LOCAL_EXECUTOR:
            raise ValueError(
                f"workers: {self.workers} needs executor: processes or ray, not local (which "
                "runs one); with executor unset it is processes"
            )
        return self

    @model_validator(mode="after")
    def _bash_block_for_the_agent(self) -> Config:
        """`bash_block` is the workdir agent's protocol: it offers no tools, so no other role and
        no `load_skill` can use it."""
        for role in (Role.MAINTAINER, Role.PROPOSER, Role.JUDGE):
            if getattr(self, role).tool_protocol == ToolProtocol.BASH_BLOCK:
                raise ValueError(
                    f"{role}.tool_protocol: bash_block is the task agent's protocol "
                    "(agent.tool_protocol): use native, text or auto"
                )
        if self.agent.tool_protocol == ToolProtocol.BASH_BLOCK and self.skills.mode == "index":
            raise ValueError(
                "agent.tool_protocol: bash_block offers no load_skill tool: set skills.mode to "
                "full or retrieve, or another tool_protocol"
            )
        return self

    @property
    def task_executor(self) -> str:
        """The executor tasks run on: `executor`, or when unset the one `workers` asks for."""
        if self.executor is not None:
            return self.executor
        return PROCESS_POOL if self.workers > 1 else LOCAL_EXECUTOR

    def role(self, name: Role) -> RoleSettings:
        """The role's settings with the top-level model and api_base filled in."""
        settings: RoleSettings = getattr(self, name)
        return settings.model_copy(
            update={
                "model": settings.model or self.model,
                "api_base": settings.api_base or self.api_base,
            }
        )

    def with_overrides(self, runner: str | None = None, **overrides: object) -> Config:
        """A copy with top-level command-line overrides applied (None means: keep); `runner` is
        `agent.runner` (`--agent`)."""
        update: dict[str, Any] = {key: value for key, value in overrides.items() if value is not None}
        if "model" in update or "api_base" in update:
            # an explicit --model/--api-base on the command line wins over per-role settings
            roles: dict[str, Any] = {
                name: getattr(self, name).model_copy(update={k: None for k in ("model", "api_base") if k in update})
                for name in Role
            }
            update.update(roles)
        if runner is not None:
            agent: AgentSettings = update.get(Role.AGENT, self.agent)
            update[Role.AGENT] = {**agent.model_dump(), "runner": agent_flag(runner)}
        try:
            return Config.model_validate({**self.model_dump(), **update})
        except ValidationError as exc:
            raise config_error(exc, "the command line") from exc


def agent_flag(runner: str) -> str:
    """`--agent`'s value as `agent.runner` names it; a ConfigError that blames the flag, not a
    file, when it names no runner."""
    try:
        return AgentSettings._known_runner(runner)
    except ValueError as exc:
        raise ConfigError(f"--agent {runner.strip()}: {exc}") from None


Location = tuple[str | int, ...]
"""Where a value sits in wikiskill.yaml, as pydantic reports it: keys and list indexes."""


def config_error(
    exc: ValidationError, source: str, line_of: Callable[[Location], int | None] | None = None
) -> ConfigError:
    """One error for a failed validation that names every problem, each where it is (the file's
    line, when `line_of` can tell it)."""
    return ConfigError.found(source, config_problems(exc, line_of))


def config_problems(
    exc: ValidationError, line_of: Callable[[Location], int | None] | None = None
) -> list[ConfigProblem]:
    """Each error of a failed validation as a problem: `setting: why`, on its line when `line_of` tells it."""
    problems = []
    for error in exc.errors():
        line = line_of(error["loc"]) if line_of is not None else None
        if error["type"] == "extra_forbidden":
            problems.append(ConfigProblem(unknown_setting(error["loc"]), line))
            continue
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        if error["type"] in ("model_type", "model_attributes_type"):
            message = "should be a section of settings (a mapping of `key: value` lines), not a single value"
        else:
            message = error["msg"].removeprefix("Value error, ")
        problems.append(ConfigProblem(f"{where}: {message}", line))
    return problems


def unknown_setting(loc: Location) -> str:
    """`unknown setting 'concurency' (did you mean 'concurrency'?)`: the nearest setting of the same
    section, else the same name in another section, else the section's settings listed."""
    *section, key = (str(part) for part in loc)
    prefix = "".join(f"{part}." for part in section)
    model = _section(section)
    if model is None:
        return f"unknown setting {prefix + key!r}"
    here = [prefix + name for name in model.model_fields]
    elsewhere = [name for name in _setting_names(Config) if name.rsplit(".", 1)[-1] == key]
    hint = did_you_mean(prefix + key, here) or (f" (did you mean {elsewhere[0]!r}?)" if elsewhere else "")
    if not hint:
        hint = f"; the settings of {section[-1] if section else 'the top level'} are {', '.join(model.model_fields)}"
    return f"unknown setting {prefix + key!r}{hint}"


def _section(path: list[str]) -> type[BaseModel] | None:
    """The model of the section at `path` (`["agent"]` -> AgentSettings), None if it is not one."""
    model: object = Config
    for part in path:
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        model = field.annotation if field is not None else None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _setting_names(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every setting's dotted name (`agent.runner`), sections' settings after the section."""
    names = []
    for name, field in model.model_fields.items():
        names.append(prefix + name)
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            names += _setting_names(field.annotation, f"{prefix}{name}.")
    return names
