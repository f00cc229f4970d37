"""The pre-flight: every problem a run's settings can have that is knowable before any model call
or task (the runner and the suite, the judge, the agent's program, the container engine, the
providers' keys), gathered into one ConfigError in the driver before anything runs, so a person
fixes them all at once and no worker meets one first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..benchmarks import spec_of
from ..core.config import CONFIG_FILE, Config
from ..core.errors import ConfigError, ConfigProblem
from ..llm.credentials import check_credentials
from ..roles.python_agent import load_runner
from ..store.settings import check_judge, check_runner

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
    """Check `config` as a command that `runs` tasks needs it (else only the runner and the judge
    are checked, as for an estimate), with the providers' keys when `keys`; each problem names
    where its setting came from (`runner_source`: `--agent` when the option gave the runner). In
    the workspace at `root`, the containers a killed wikiskill left behind are removed."""
    checks: list[Check] = [lambda: check_runner(config, runner_source), lambda: check_judge(config, judge_source)]
    if runs:
        checks += [lambda: check_agent(config), lambda: check_containers(config, root)]
    if runs and keys:
        checks.append(lambda: check_credentials(config))
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
    """A Python runner that cannot be imported, or a CLI that cannot start, is refused in one line."""
    if config.agent.python:
        load_runner(config.agent.runner)
    elif config.agent.cli:
        from ..roles.coding_agents.presets import check_cli

        check_cli(config.agent)


def check_containers(config: Config, root: Path | None = None) -> None:
    """A suite of containers needs its container engine: one missing, or a daemon not running, is
    refused in one line; in the workspace at `root`, the containers a killed wikiskill left behind
    are removed."""
    if not spec_of(config.benchmark).containers:
        return
    from ..environments.orphans import sweep_orphans
    from ..environments.runtime import open_runtime

    runtime = open_runtime(config.environment.runtime)
    if root is not None:
        sweep_orphans(runtime, root)
