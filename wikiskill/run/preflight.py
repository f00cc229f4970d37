"""The pre-flight: every problem a run's settings can have that is knowable before any model call
or task (the runner and the suite, the kind of task agent and the suite, the judge, the agent's
program, the offline model's reach, the container engine and whether a CLI in a container reaches
its model, the providers' keys), gathered into one ConfigError in the driver before anything runs,
so a person fixes them all at once and no worker meets one first."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from ..benchmarks import load_benchmark, spec_of
from ..benchmarks.harbor import ContainerSuite, HarborTask
from ..contracts.roles import TASK_AGENTS
from ..contracts.runners import runner_of
from ..core.config import CONFIG_FILE, Config
from ..core.errors import ConfigError, ConfigProblem
from ..llm.credentials import check_credentials
from ..roles.settings import Role
from ..store.settings import a_kind, check_judge, check_runner

Check = Callable[[], object]


def preflight(
    config: Config,
    root: Path | None = None,
    *,
    runner_source: str = CONFIG_FILE,
    judge_source: str = CONFIG_FILE,
    runs: bool = True,
    keys: bool = True,
) -> None:
    """Check `config` as a command that `runs` tasks needs it (else only the runner, the agent's
    kind and the judge are checked, as for an estimate), with the providers' keys when `keys`; each
    problem names where its setting came from (`runner_source`: `--agent` when the option gave the
    runner). In the workspace at `root`, the containers a killed wikiskill left behind are removed
    and a CLI in a task's container must reach its model (`environment.host_network`, which init
    does not write)."""
    checks: list[Check] = [
        partial(check_runner, config, runner_source),
        partial(check_agent_kind, config),
        partial(check_judge, config, judge_source),
    ]
    containers = runs and spec_of(config.benchmark).containers
    if runs:
        checks.append(partial(check_agent, config))
    if containers:
        checks.append(partial(check_containers, config, root))
    calls_out = runner_of(config.agent).calls_model_from_container
    if containers and root is not None and calls_out:  # a run's: init writes what a person edits next
        checks.append(partial(check_container_agent, config, root))
    if runs and keys:
        checks.append(partial(check_credentials, config))
    gather(checks)


def gather(checks: list[Check]) -> None:
    """Run every check; one ConfigError holding each one's problem, in order, if any failed."""
    problems: list[ConfigProblem] = []
    for check in checks:
        try:
            check()
        except ConfigError as exc:
            problems.append(ConfigProblem(str(exc)))
    if len(problems) == 1:
        raise ConfigError(problems[0].text, problems)
    if problems:
        raise ConfigError("; ".join(problem.text for problem in problems), problems)


def check_agent(config: Config) -> None:
    """The task agent can be made: a Python runner that cannot be imported, a CLI that cannot
    start, or the offline model on a suite it cannot play is refused in one line."""
    runner_of(config.agent).check(config)


def check_agent_kind(config: Config) -> None:
    """The kind of task agent `agent.kind` names plays the suite's kind. Its class is loaded here,
    not when the settings are read, which check names only."""
    agent = config.agent
    if agent.kind is None or "kind" not in runner_of(agent).own_settings(agent.runner):
        return
    plays = TASK_AGENTS.load(agent.kind).plays
    kind = spec_of(config.benchmark).kind
    if plays is not kind:
        raise ConfigError(
            f"{CONFIG_FILE}: agent.kind: {agent.kind} plays {plays} suites; {config.benchmark} is {a_kind(kind)} suite"
        )


def check_container_agent(config: Config, root: Path | None) -> None:
    """A coding-agent CLI that plays inside each task's container must reach its model from there:
    not on this machine's loopback, and not from a task without a network, unless the container
    shares the host's network."""
    from ..roles.coding_agents.in_container import check_model_network

    api_base = config.role(Role.AGENT).api_base
    check_model_network(config.environment, api_base, config.agent.runner, container_tasks(config, root))


def container_tasks(config: Config, root: Path | None) -> list[HarborTask]:
    """The tasks of the suite of containers `config` names (a registry dataset fetched as it loads)."""
    suite = load_benchmark(config, root)
    return list(suite.by_id.values()) if isinstance(suite, ContainerSuite) else []


def check_containers(config: Config, root: Path | None = None) -> None:
    """A suite of containers needs its container engine: one missing, or a daemon not running, is
    refused in one line; in the workspace at `root`, the containers a killed wikiskill left behind
    are removed."""
    from ..environments.orphans import sweep_orphans
    from ..environments.runtime import open_runtime

    runtime = open_runtime(config.environment.runtime)
    if root is not None:
        sweep_orphans(runtime, root)
