"""The roles' sections of wikiskill.yaml (`agent`, `maintainer`, `proposer`, `judge`): the model
settings every role has and what each role reads beside them. In core's layer: it imports only
`core`, so that `core.config` can assemble it."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator, model_validator

from ..core.errors import ConfigError
from ..core.parts import TASK_AGENT, TASK_RUNNER
from ..core.registry import import_class
from ..core.section import Section


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


class RoleSettings(Section):
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
    """The class of the kind of runner `name` (a `contracts.runners.TaskRunner`, which core's layer
    may not import: read through its members); ValueError when it cannot be imported."""
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


def agent_flag(runner: str) -> str:
    """`--agent`'s value as `agent.runner` names it; a ConfigError that blames the flag, not a
    file, when it names no runner."""
    try:
        return AgentSettings._known_runner(runner)
    except ValueError as exc:
        raise ConfigError(f"--agent {runner.strip()}: {exc}") from None
