"""Setting a workspace up: `init` makes one with a checked wikiskill.yaml, `open` finds one, and
`doctor` probes the models its settings name."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..contracts.runners import runner_named
from ..core.config import CONFIG_FILE, OFFLINE_MODEL
from ..core.errors import ConfigError, WorkspaceError
from ..core.parts import CLI_PRESET, TASK_RUNNER
from ..core.prompts import render
from ..roles.settings import agent_flag
from ..run.preflight import preflight
from ..store.settings import load_config, parse_config
from ..store.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..llm.doctor import RoleCheck


def init_workspace(
    path: Path,
    benchmark: str = "textworld-cooking",
    model: str = "offline",
    api_base: str | None = None,
    train: int | None = None,
    val: int | None = None,
    test: int | None = None,
    concurrency: int = 4,
    agent: str | None = None,
    command: Sequence[str] | None = None,
    registry: str | None = None,
    refresh: bool = False,
    notify: Callable[[str], object] = lambda _: None,
) -> Workspace:
    """Create a workspace from workspace_template/ with a validated wikiskill.yaml.

    The suite's name is checked here, with what it needs installed, and a `jsonl:DIR` suite's files
    are read line by line, so a broken suite is refused before any model call. `agent`:
    `agent.runner` (`builtin`, `python:MODULE:FUNCTION` or a CLI preset such as `qwen-code`),
    refused for a suite it cannot play or when it cannot start. `command`: the argv template of
    `agent: command` (`agent.command`), which that runner needs and no other takes. `registry`:
    the Harbor registry (a registry.json's path or URL) a `harbor:NAME@VERSION` dataset is
    fetched from, now, and kept as `harbor.registry`, the digest of its entry as
    `harbor.dataset_digest`; `notify` hears when that entry changed since it was last fetched here,
    and `refresh` fetches it anew even when it did not.
    """
    from ..benchmarks import canonical_name, spec_of
    from ..benchmarks.harbor_datasets import fetch_named

    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise WorkspaceError(f"{path} is a file, not a folder: give a new or empty folder for the workspace")
    benchmark = canonical_name(benchmark, base=Path.cwd())
    spec = spec_of(benchmark)
    if registry is not None and not spec.registry_datasets:
        raise ConfigError(f"a registry names datasets (harbor:NAME@VERSION), which {benchmark} does not take")
    if registry is not None and "://" not in registry:
        registry = str(Path(registry).expanduser().resolve())
    fetched = fetch_named(benchmark, registry, Path.cwd(), refresh=refresh)  # its errors stop init
    if fetched is not None and fetched.changed:
        notify(fetched.changed)
    named = agent_flag(agent) if agent is not None else TASK_RUNNER.default
    runner = None if named == TASK_RUNNER.default else named  # the default is not written
    own = runner_named(named).own_settings(named)
    _check_command(named, "command" in own, command)
    if model == OFFLINE_MODEL and not spec.offline_playable and runner is None:
        raise ConfigError(
            f"the offline model cannot play {benchmark}; it needs an LLM "
            "(pass --model, e.g. --model openai/gpt-4o-mini)"
        )
    counts = spec.default_splits
    splits = (
        None
        if counts is None
        else {"train": train or counts.train, "val": val or counts.val, "test": test or counts.test}
    )
    text = render(
        "wikiskill.yaml",
        folder="workspace_template",
        benchmark=benchmark,
        model=model,
        api_base=api_base,
        concurrency=concurrency,
        splits=splits,
        max_steps=spec.max_steps,
        runner=runner,
        command=json.dumps(list(command), ensure_ascii=False) if command else None,
        cli_presets=" | ".join(CLI_PRESET.names()),
        cli="sandbox" in own,
        bwrap=shutil.which("bwrap") is not None,
    )
    if registry is not None or fetched is not None:
        text += "\nharbor:\n"
        text += "" if registry is None else f"  registry: {json.dumps(registry)}\n"
        text += "" if fetched is None else f"  dataset_digest: {json.dumps(fetched.digest)}\n"
    config = parse_config(text, CONFIG_FILE)
    preflight(config, judge_source=benchmark, keys=False)
    try:
        return Workspace.create(path, text)
    except OSError as exc:
        raise WorkspaceError(f"cannot create a workspace at {path}: {exc.strerror or exc}") from exc


def _check_command(runner: str, is_command: bool, command: Sequence[str] | None) -> None:
    """`--agent command` (a runner that reads `agent.command`) comes with its argv, and only it takes one."""
    if is_command and not command:
        raise ConfigError(
            "--agent command needs the CLI's argv: --command 'mycli --model {model} {prompt}', or one --arg per item"
        )
    if command and not is_command:
        raise ConfigError(f"--command and --arg give the argv of --agent command, not of {runner}")


def open_workspace(path: Path | None = None) -> Workspace:
    """The workspace at `path` (or above it), refused when its wikiskill.yaml is not valid."""
    ws = Workspace.open(path)
    load_config(ws.root)
    return ws


def doctor(ws: Workspace, model: str | None = None, api_base: str | None = None) -> list[RoleCheck]:
    """Probe each role's model once: reachable, latency, JSON output, tool protocol, context, price.
    The probes' speed is kept in the workspace's state folder, for `estimate`'s wall time."""
    from ..llm.doctor import diagnose
    from ..llm.speed import SPEED_FILE, SpeedBook

    speeds = SpeedBook(ws.state_dir / SPEED_FILE)
    checks = diagnose(load_config(ws.root).with_overrides(model=model, api_base=api_base), speeds)
    speeds.save()
    return checks
