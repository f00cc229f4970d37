"""wikiskill.yaml's top level (`Config`), which assembles each part's section from the settings
model beside that part (`roles/settings.py`, `loop/settings.py`, ...), and the one-line message
for each bad setting. Every field's docstring is its documentation; reading the file (and
checking the benchmark it names) is `store.settings`."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from ..benchmarks.settings import HarborSettings, SplitSizes
from ..environments.settings import EnvironmentSettings
from ..knowledge.settings import SkillsSettings, WikiSettings
from ..llm.settings import BudgetSettings, LLMSettings
from ..loop.settings import GateSettings, SamplingSettings
from ..roles.settings import (
    AgentSettings,
    JudgeSettings,
    MaintainerSettings,
    ProposerSettings,
    Role,
    RoleSettings,
    ToolProtocol,
    agent_flag,
)
from ..run.executors.settings import RaySettings
from ..run.settings import InfraSettings
from ..telemetry.settings import TelemetrySettings
from .errors import ConfigError, ConfigProblem, did_you_mean
from .parts import EXECUTOR, LOCAL_EXECUTOR, PROCESS_POOL, ROUND_STEP
from .section import Section

CONFIG_FILE = "wikiskill.yaml"
OFFLINE_MODEL = "offline"


class Tracking(StrEnum):
    """An experiment tracker an evolve run also logs its rounds to."""

    MLFLOW = "mlflow"
    """MLflow at `MLFLOW_TRACKING_URI` (docs/observability.md); needs `wikiskill[mlflow]`."""


class Config(Section):
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
    infra: InfraSettings = InfraSettings()
    """Retries of a task whose machinery fails."""
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
