"""The library API that the CLI is a thin shell over, and that hosts and tests call directly."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .benchmarks import SPLITS, FamilyListing, Split
from .core.config import (
    BUILTIN_RUNNER,
    CONFIG_FILE,
    OFFLINE_MODEL,
    Config,
    LLMSettings,
    ReferenceAgent,
    Role,
    RoleSettings,
    agent_flag,
)
from .core.errors import ConfigError, WikiskillError, WorkspaceError
from .core.parts import CLI_PRESETS, COMMAND_PRESET
from .core.prompts import render
from .history.rollback import RollbackResult
from .history.rollback import rollback as _rollback
from .history.status import RoundRow, Status, round_rows
from .history.status import status as _status
from .history.test_looks import looks_at
from .history.transcript import TaskView, task_view
from .knowledge.skills import Skill
from .knowledge.skills import load_skills as _load_skills
from .knowledge.skillsblock import render_skills
from .loop.evolve import EvolveResult, holding, run_rounds
from .loop.harness import Evaluated, Harness
from .run.preflight import preflight
from .run.team import ModelFactory
from .store.settings import load_config, parse_config
from .store.workspace import Workspace
from .telemetry.spans import command as traced_command

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Sequence

    from rich.console import Console

    from .benchmarks.harbor import HarborSuite
    from .benchmarks.harbor_export import HarborExport
    from .environments.base_image import BaseImage
    from .history.audit import AuditReport
    from .history.compare import Comparison
    from .history.live import LiveReportServer
    from .history.review import ReviewItem
    from .history.roundstory import RoundStory
    from .integrations.export import ExportResult
    from .integrations.host import SkillSet
    from .integrations.ingest import IngestResult
    from .integrations.lookup import Hit
    from .integrations.session_tasks import SessionTasks
    from .integrations.watch import WatchReport
    from .knowledge.lint import Problem
    from .llm.doctor import RoleCheck
    from .loop.estimate import Estimate
    from .loop.review import ReviewDecision
    from .loop.usage import SkillUsage
    from .run.suite_check import TaskCheck
    from .store.uplift_record import UpliftResult

__all__ = [
    "Workspace",
    "RunOptions",
    "init_workspace",
    "open_workspace",
    "evolve",
    "estimate",
    "evaluate",
    "compare",
    "audit",
    "status",
    "round_log",
    "show_task",
    "load_skills",
    "show_skill",
    "prompt",
    "rollback",
    "review",
    "accept",
    "reject",
    "lock",
    "unlock",
    "skill_set",
    "export",
    "lint",
    "watch",
    "search",
    "skill_usage",
    "show_round",
    "doctor",
    "benchmarks",
    "ingest",
    "tasks_from_sessions",
    "report",
    "serve_mcp",
    "check_suite",
    "harbor_suite",
    "base_image",
    "export_tasks",
]


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
) -> Workspace:
    """Create a workspace from workspace_template/ with a validated wikiskill.yaml.

    The suite's name is checked here, with what it needs installed, and a `jsonl:DIR` suite's files
    are read line by line, so a broken suite is refused before any model call. `agent`:
    `agent.runner` (`builtin`, `python:MODULE:FUNCTION` or a CLI preset such as `qwen-code`),
    refused for a suite it cannot play or when it cannot start. `command`: the argv template of
    `agent: command` (`agent.command`), which that runner needs and no other takes. `registry`:
    the Harbor registry (a registry.json's path or URL) a `harbor:NAME@VERSION` dataset is
    fetched from, now, and kept as `harbor.registry`.
    """
    from .benchmarks import canonical_name, spec_of
    from .benchmarks.registry import split_name
    from .store.harbor_datasets import fetch_harbor_folder

    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise WorkspaceError(f"{path} is a file, not a folder: give a new or empty folder for the workspace")
    benchmark = canonical_name(benchmark, base=Path.cwd())
    family, argument = split_name(benchmark)
    if registry is not None and family != "harbor":
        raise ConfigError(f"a registry names Harbor datasets (harbor:NAME@VERSION), not {benchmark}")
    if registry is not None and "://" not in registry:
        registry = str(Path(registry).expanduser().resolve())
    if family == "harbor" and argument is not None:
        fetch_harbor_folder(argument, registry, Path.cwd())  # a dataset is fetched now: its errors stop init
    spec = spec_of(benchmark)
    runner = None if agent is None or agent.strip().lower() == BUILTIN_RUNNER else agent_flag(agent)
    _check_command(runner, command)
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
        cli_presets=" | ".join(CLI_PRESETS.names()),
        cli=runner is not None and not runner.startswith("python:") and runner.lower() not in set(ReferenceAgent),
        bwrap=shutil.which("bwrap") is not None,
    )
    if registry is not None:
        text += f"\nharbor:\n  registry: {json.dumps(registry)}\n"
    config = parse_config(text, CONFIG_FILE)
    preflight(config, judge_source=benchmark, keys=False)
    try:
        return Workspace.create(path, text)
    except OSError as exc:
        raise WorkspaceError(f"cannot create a workspace at {path}: {exc.strerror or exc}") from exc


def _check_command(runner: str | None, command: Sequence[str] | None) -> None:
    """`--agent command` comes with its argv, and only it takes one."""
    is_command = runner is not None and runner.lower() == COMMAND_PRESET
    if is_command and not command:
        raise ConfigError(
            "--agent command needs the CLI's argv: --command 'mycli --model {model} {prompt}', or one --arg per item"
        )
    if command and not is_command:
        raise ConfigError(f"--command and --arg give the argv of --agent command, not of {runner or BUILTIN_RUNNER}")


def harbor_suite(ws: Workspace) -> HarborSuite | None:
    """The workspace's Harbor suite as its settings read it (`unreadable` says which tasks were
    left out and why); None for other suites."""
    from .benchmarks import load_benchmark, spec_of
    from .benchmarks.harbor import HarborSuite
    from .store.harbor_datasets import fetch_for

    config = load_config(ws.root)
    if not spec_of(config.benchmark).containers:
        return None
    fetch_for(config, ws.root)
    suite = load_benchmark(config, ws.root)
    return suite if isinstance(suite, HarborSuite) else None


def suite_network(ws: Workspace) -> tuple[int, int, bool] | None:
    """How many of a Harbor suite's tasks need the network in some phase, of how many, and
    whether the engine has a bridge network to give them; None for other suites."""
    from .environments.network import EngineNetwork
    from .environments.runtime import open_runtime

    suite = harbor_suite(ws)
    if suite is None:
        return None
    config = load_config(ws.root)
    needing = sum(task.config.needs_network for task in suite.by_id.values())
    network = EngineNetwork(open_runtime(config.environment.runtime), config.environment.host_network)
    return needing, len(suite.by_id), network.host_network or network.has_bridge


def check_suite(
    path: Path | str, runtime: str = "docker", concurrency: int = 2, registry: str | None = None
) -> list[TaskCheck]:
    """Each task's reference scored as a run scores it. A Harbor suite's tasks are played by
    `oracle` (must score 1) and `nop` (must score 0) in containers, build logs going to
    `$WIKISKILL_CACHE_DIR/images` (else ~/.cache/wikiskill/images); a task-folder suite (`tasks:PATH`,
    or a folder with suite.yaml) scores each task's solution/ laid over its files (1) and its files
    untouched (0), or a QA task's answer (1) and no answer (0). `harbor:NAME@VERSION` is a dataset
    of the Harbor registry `registry` (a path or URL; default: Harbor's public one)."""
    import asyncio

    from .benchmarks.harbor import HarborSuite
    from .benchmarks.task_folders import SUITE_FILE, TaskFolders
    from .core.config import ContainerRuntime, EnvironmentSettings
    from .core.errors import choice
    from .run.folder_check import check_folders
    from .run.harbor_tasks import open_setup
    from .run.suite_check import TaskCheck
    from .run.suite_check import check_suite as _check_suite
    from .store.harbor_datasets import fetch_harbor_folder

    text = str(path)
    folder = Path(text.removeprefix("tasks:")).expanduser()
    if text.startswith("tasks:") or (folder / SUITE_FILE).is_file():
        checks, unchecked = check_folders(TaskFolders(folder))
        return sorted([*checks, *(TaskCheck(task_id, reference=False) for task_id in unchecked)], key=_by_id)
    if not text.startswith("harbor:") and not folder.exists():
        return _check_named_suite(text)
    suite = HarborSuite(fetch_harbor_folder(text.removeprefix("harbor:"), registry, Path.cwd()))
    settings = EnvironmentSettings(runtime=choice(ContainerRuntime, runtime, "container runtime"))
    cache = Path(os.environ.get("WIKISKILL_CACHE_DIR") or "~/.cache/wikiskill").expanduser()
    setup = open_setup(settings, cache, workspace=suite.directory, harbor=suite.settings)
    return asyncio.run(_check_suite(suite, setup, concurrency))


def _check_named_suite(name: str) -> list[TaskCheck]:
    """Each task of a named suite (its default splits) under its known-good policy (a game's
    walkthrough, a tool-use task's reference calls, a QA task's answer), which must score 1, and
    doing nothing, which must score 0."""
    from .benchmarks import SPLITS, canonical_name, load_benchmark
    from .benchmarks.reference import play_nothing, play_reference
    from .core.config import Config
    from .run.suite_check import TaskCheck

    suite = load_benchmark(Config(benchmark=canonical_name(name)))
    suite.prepare(SPLITS)
    checks = []
    for task in (task for split in SPLITS for task in suite.tasks(split)):
        reference = play_reference(suite, task)
        checks.append(
            TaskCheck(f"{task.split}/{task.id}", reference=False)
            if reference is None
            else TaskCheck(f"{task.split}/{task.id}", reference, play_nothing(suite, task))
        )
    return checks


def _by_id(check: TaskCheck) -> str:
    return check.task_id


def open_workspace(path: Path | None = None) -> Workspace:
    """The workspace at `path` (or above it), refused when its wikiskill.yaml is not valid."""
    ws = Workspace.open(path)
    load_config(ws.root)
    return ws


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What every command that runs tasks (`evolve`, `eval`, `compare`, `audit`) takes beside its
    own arguments: the settings it overrides for this run (None keeps wikiskill.yaml's; `agent` is
    `agent.runner`), the console its progress is shown on (None: quiet), and the models of its
    roles when a host or a test supplies them (then no provider key is checked)."""

    model: str | None = None
    api_base: str | None = None
    concurrency: int | None = None
    workers: int | None = None
    executor: str | None = None
    agent: str | None = None
    console: Console | None = None
    model_factory: ModelFactory | None = None


def _overridden(ws: Workspace, options: RunOptions) -> Config:
    """The workspace's settings with the command's overrides."""
    return load_config(ws.root).with_overrides(
        model=options.model,
        api_base=options.api_base,
        concurrency=options.concurrency,
        workers=options.workers,
        executor=options.executor,
        runner=options.agent,
    )


def _config(ws: Workspace, options: RunOptions) -> Config:
    """The workspace's settings with the command's overrides, through the pre-flight: every
    problem found (a missing provider key, an agent runner that cannot be loaded or cannot play
    the suite, ...) is refused here, before any progress bar, lock or file, in one line."""
    config = _overridden(ws, options)
    preflight(config, ws.root, runner_source=_runner_source(options), keys=options.model_factory is None)
    return config


def _runner_source(options: RunOptions) -> str:
    return "--agent" if options.agent else CONFIG_FILE


def _harness(ws: Workspace, config: Config, options: RunOptions) -> Harness:
    console = options.console
    if console is None:
        return Harness(ws, config, None, options.model_factory)
    from .loop.progress import RichReporter

    with console.status(f"loading the {config.benchmark} benchmark"):  # shown at once, gone when done
        return Harness(ws, config, RichReporter(console), options.model_factory)


def evolve(
    ws: Workspace, rounds: int, options: RunOptions | None = None, commit_human_edits: bool = False
) -> EvolveResult:
    """Run or resume `rounds` rounds of evolution on the workspace."""
    options = options or RunOptions()
    config = _config(ws, options)
    with (
        traced_command("evolve", config.telemetry, benchmark=config.benchmark, rounds=rounds),
        holding(ws, commit_human_edits),
        _harness(ws, config, options) as harness,
    ):
        return run_rounds(harness, rounds, commit_human_edits)


def estimate(ws: Workspace, rounds: int = 1, options: RunOptions | None = None) -> Estimate:
    """What the next `rounds` rounds of `evolve` will call, part by part (`evolve --dry-run`):
    calls, tokens, and USD where the model is priced, from the settings with `options`' overrides
    and the usage the last round measured, with `budget.max_usd`. Writes nothing and calls no model."""
    from .loop.estimate import Estimate, estimate_round
    from .store.rounds import completed_rounds

    options = options or RunOptions()
    config = _overridden(ws, options)
    preflight(config, runner_source=_runner_source(options), runs=False)
    first = completed_rounds(ws) + 1
    with Harness(ws, config, model_factory=options.model_factory) as harness:
        estimates = [
            estimate_round(harness.evaluating, number, later=number > first) for number in range(first, first + rounds)
        ]
    return Estimate(rounds=estimates, max_usd=config.budget.max_usd)


def _split(split: str) -> Split:
    if split not in SPLITS:
        raise WikiskillError(f"unknown split {split!r}: use val, test or train")
    return split


def evaluate(ws: Workspace, split: str, ref: str = "main", options: RunOptions | None = None) -> Evaluated:
    """Score the skills at `ref` on a split (`gate.repeats` times per task, as the gate does).
    Writes nothing to git; finished tasks are cached under the evaluation's fingerprint. Another
    `options.agent` measures the same skills on another agent, under its own fingerprint."""
    split, options = _split(split), options or RunOptions()
    ws.resolve(ref)
    config = _config(ws, options)
    with traced_command("eval", config.telemetry, benchmark=config.benchmark, split=split, ref=ref):
        with _harness(ws, config, options) as harness, looks_at(harness, split, "eval", [ref]):
            harness.benchmark.prepare((split,))
            return harness.evaluating.evaluate(ref, split, f"eval {split}")


def compare(ws: Workspace, ref_a: str, ref_b: str, split: str = "val", options: RunOptions | None = None) -> Comparison:
    """Ref B's skills against ref A's on a split, task by task, with a confidence interval of the
    mean difference. Evaluations git records under the current fingerprint are not rerun."""
    from .history.compare import compare as _compare

    split, options = _split(split), options or RunOptions()
    for ref in (ref_a, ref_b):
        ws.resolve(ref)  # an unknown ref is refused before the benchmark loads
    config = _config(ws, options)
    with traced_command("compare", config.telemetry, benchmark=config.benchmark, split=split):
        with _harness(ws, config, options) as harness, looks_at(harness, split, "compare", [ref_a, ref_b]):
            harness.benchmark.prepare((split,))
            return _compare(harness.evaluating, ref_a, ref_b, split)


def uplift(
    ws: Workspace,
    split: str = "test",
    trials: int = 1,
    arms: Sequence[str] | None = None,
    options: RunOptions | None = None,
) -> UpliftResult:
    """Arms of skills (none, main, self-written, suite, raw, curated:PATH) scored on the same tasks
    `trials` times each, with intervals, the paired difference from `none`, and each of main's
    skills left out in turn; recorded on `uplift/results` (and, on test, as a look at test). Unset
    `arms`: none, main, and self-written unless the proposer is offline."""
    from .history.uplift import check_arms, default_arms, measure, record

    split, options = _split(split), options or RunOptions()
    if trials < 1:
        raise WikiskillError("--trials must be at least 1")
    config = _config(ws, options)
    chosen = check_arms(list(arms if arms is not None else default_arms(config)))
    with traced_command("uplift", config.telemetry, benchmark=config.benchmark, split=split):
        with _harness(ws, config, options) as harness, looks_at(harness, split, "uplift", ["main"]) as look:
            harness.benchmark.prepare((split, "train") if "self-written" in chosen else (split,))
            result = measure(harness, split, trials, chosen)
            result = replace(result, test_look=look if isinstance(look, int) else None)
            record(harness, result)
            return result


def audit(ws: Workspace, rerun: bool = False, options: RunOptions | None = None) -> AuditReport:
    """Check every accepted merge on main against the evaluation it claims (see wikiskill.history.audit);
    `rerun` evaluates each again from scratch when it was recorded under the current settings."""
    from .history.audit import Records
    from .history.audit import audit as _audit

    options = options or RunOptions()
    if not rerun:  # reads git only: no suite, no model, no key
        config = _overridden(ws, options)
        preflight(config, runner_source=_runner_source(options), runs=False)
        with traced_command("audit", config.telemetry, benchmark=config.benchmark, rerun=rerun):
            return _audit(Records(ws, config))
    config = _config(ws, options)
    with traced_command("audit", config.telemetry, benchmark=config.benchmark, rerun=rerun):
        with _harness(ws, config, options) as harness:
            harness.benchmark.prepare(("val",))
            return _audit(harness.reading, harness.evaluating)


def status(ws: Workspace) -> Status:
    return _status(ws)


def round_log(ws: Workspace) -> list[RoundRow]:
    load_config(ws.root)  # refused like `status`: a broken wikiskill.yaml is never silently read past
    return round_rows(ws)


def load_skills(ws: Workspace, ref: str = "main") -> list[Skill]:
    """The skills at any git ref (main by default)."""
    ws.resolve(ref)
    return _load_skills(ws.read_files(ref, "skills"))


def show_skill(ws: Workspace, name: str, ref: str = "main") -> str:
    files = ws.read_files(ref, f"skills/{name}")
    if "SKILL.md" not in files:
        raise WikiskillError(f"no skill named {name!r} at {ref}")
    purpose = files.get("PURPOSE.md", "")
    return files["SKILL.md"] + (f"\n---- PURPOSE.md ----\n{purpose}" if purpose else "")


def prompt(ws: Workspace, task: str = "", mode: str | None = None, ref: str = "main") -> str:
    """The skills block for a system prompt, in the workspace's mode or the one given."""
    settings = load_config(ws.root).skills.with_mode(mode)
    return render_skills(load_skills(ws, ref), settings, task)


def rollback(
    ws: Workspace,
    skill: str | None = None,
    round_number: int | None = None,
    keep_human_edits: bool = False,
    force: bool = False,
) -> RollbackResult:
    """Revert every change of `skill` since its oldest active accepted change, the edits by hand
    included (only the accepted changes with `keep_human_edits`), or the change accepted in
    `round_number`, in one commit; a locked skill (`skills.locked`) only with `force`."""
    return _rollback(ws, skill, round_number, keep_human_edits, force)


# -- a person in the loop: the review queue and locked skills --------------------------------------


def review(ws: Workspace) -> list[ReviewItem]:
    """The candidates waiting for a person's review (`gate.review: human`), oldest first, each with
    its diff, fixed and broken tasks, interval, cost change and the wiki pages and traces it cites."""
    from .history.review import review_queue

    return review_queue(ws)


def accept(ws: Workspace, name: str, options: RunOptions | None = None) -> ReviewDecision:
    """Merge the pending candidate `name` (`rNNN-<name>` or its skill's name) in one commit decided
    by a person; when main's skills or the evaluation setup changed since it was validated, it is
    validated again first and the gate's verdict on that decides."""
    from .loop.review import accept as _accept
    from .store.pending import find_pending

    find_pending(ws, name)  # an unknown name is refused before the benchmark loads
    options = options or RunOptions()
    config = _config(ws, options)
    with ws.lock("wikiskill accept"):
        ws.recover()
        with _harness(ws, config, options) as harness:
            harness.benchmark.prepare(("val",))
            return _accept(harness, name)


def reject(ws: Workspace, name: str, why: str) -> ReviewDecision:
    """Turn down the pending candidate `name` for the reason `why`, in one commit decided by a
    person: tagged `rejected/rNNN-<name>`, the reason in skill-impact.md for the proposer."""
    from .loop.review import reject as _reject

    load_config(ws.root)
    with ws.lock("wikiskill reject"):
        ws.recover()
        return _reject(ws, name, why)


def lock(ws: Workspace, name: str) -> str | None:
    """Add `name` to `skills.locked` in one commit (with the skill's uncommitted files, when a
    person wrote it by hand); None when it was locked and committed already."""
    from .loop.review import set_lock

    with ws.lock("wikiskill lock"):
        ws.recover()
        return set_lock(ws, name, True)


def unlock(ws: Workspace, name: str) -> str | None:
    """Remove `name` from `skills.locked` in one commit; None when it was not locked."""
    from .loop.review import set_lock

    with ws.lock("wikiskill unlock"):
        ws.recover()
        return set_lock(ws, name, False)


# -- using the skills elsewhere: host API, export, lint, watch -----------------------------------


def skill_set(path: Path | None = None, ref: str | None = "main", mode: str | None = None) -> SkillSet:
    """The skills of a workspace for a host agent (see wikiskill.integrations.host); ref=None: working tree."""
    from .integrations.host import SkillSet

    return SkillSet.open(path, ref, mode)


def export(ws: Workspace, dest: Path, ref: str = "main", target: str = "agents") -> ExportResult:
    """Write the skills at `ref` as Agent Skills folders (idempotent): into `dest` itself (`agents`),
    or into the folder Claude Code (`claude`: dest/.claude/skills) or Codex (`codex`:
    dest/.agents/skills) reads under the project or home folder `dest`."""
    from .integrations.export import export_skills
    from .integrations.export_targets import export_target

    return export_skills(ws, dest, ref, export_target(target))


def serve_mcp(
    ws: Workspace, ref: str = "main", transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000
) -> None:
    """Serve the skills at `ref` to MCP hosts until they disconnect (see wikiskill.integrations.mcp_server); every
    request reads the ref's current tip, so a skill the gate merges is served without a restart."""
    from .core.errors import choice
    from .integrations.host import SkillSet
    from .integrations.mcp_server import Transport, serve

    over = choice(Transport, transport, "transport")
    serve(SkillSet(ws, ref), over, host, port)


def lint(ws: Workspace) -> list[Problem]:
    """Problems of skills/ and wiki/ in the working tree (uncommitted edits included), held-out
    text in a skill among them."""
    from .knowledge.leakage import workspace_held_out
    from .knowledge.lint import lint_workspace, working_files

    leaks = workspace_held_out(ws.root).problems(working_files(ws.root, "skills"))
    return sorted(set(lint_workspace(ws.root) + leaks))


def watch(
    ws: Workspace,
    on_report: Callable[[WatchReport], None],
    commit: bool = False,
    stop: threading.Event | None = None,
    timeout: float | None = None,
) -> None:
    """Lint every burst of saves under skills/ and wiki/; with `commit`, commit the valid edits."""
    from .integrations.watch import watch as _watch

    _watch(ws, on_report, commit=commit, stop=stop, timeout=timeout)


def search(ws: Workspace, query: str, corpus: str = "wiki", ref: str | None = "main", limit: int = 10) -> list[Hit]:
    """Ranked hits (BM25) for `query` in the wiki's pages, the skills, or the latest train traces."""
    from .integrations.lookup import corpus as _corpus
    from .integrations.lookup import search as _search

    if ref is not None:
        ws.resolve(ref)
    return _search(ws, query, _corpus(corpus), ref, limit)


def skill_usage(ws: Workspace, ref: str = "main") -> dict[str, SkillUsage]:
    """Per skill: train prompts it reached, and the tasks its changes helped and hurt."""
    from .loop.usage import skill_usage as _skill_usage

    ws.resolve(ref)
    return _skill_usage(ws, ref)


def show_task(ws: Workspace, round_number: int, task_id: str) -> TaskView:
    """One task of a round as the agent lived it (`wikiskill show ROUND --task ID`)."""
    return task_view(ws, round_number, task_id)


def show_round(ws: Workspace, round_number: int) -> RoundStory:
    """What happened in a round: traces sampled, pages changed, the proposer's reads and proposal
    (or why it was invalid), the per-task validation and the decision, all read from git."""
    from .history.roundstory import round_story

    return round_story(ws, round_number)


def benchmarks() -> list[FamilyListing]:
    """Every registered benchmark family (built-in and plugins) with what it needs."""
    from .benchmarks import list_families

    return list_families()


def base_image(
    name: str | None = None,
    runtime: str = "docker",
    rebuild: bool = False,
    mirror: str | None = None,
    packages: tuple[str, ...] = (),
) -> BaseImage:
    """Make the base image that task Dockerfiles build FROM (debootstrap and `import`, no image
    registry): Debian with python3 and `packages`; an image that already has the name is kept
    unless `rebuild`."""
    from .core.config import ContainerRuntime
    from .core.errors import choice
    from .environments.base_image import DEFAULT_BASE_IMAGE, make_base_image

    return make_base_image(
        name or DEFAULT_BASE_IMAGE,
        choice(ContainerRuntime, runtime, "container runtime"),
        rebuild,
        mirror,
        tuple(packages),
    )


def export_tasks(
    suite: Path | str, out: Path, task_format: str = "harbor", base_image: str | None = None
) -> HarborExport:
    """Write the task-folder suite `suite` (a folder, or `tasks:PATH`) in another suite format under
    `out`: `harbor`, one Harbor task folder per task, its Dockerfile FROM `base_image`."""
    from .benchmarks.harbor_export import SuiteFormat, export_harbor
    from .core.errors import choice
    from .environments.base_image import DEFAULT_BASE_IMAGE

    choice(SuiteFormat, task_format, "task suite format")
    return export_harbor(Path(str(suite).removeprefix("tasks:")), out, base_image or DEFAULT_BASE_IMAGE)


def doctor(ws: Workspace, model: str | None = None, api_base: str | None = None) -> list[RoleCheck]:
    """Probe each role's model once: reachable, latency, JSON output, tool protocol, context, price."""
    from .llm.doctor import diagnose

    return diagnose(load_config(ws.root).with_overrides(model=model, api_base=api_base))


# -- learning from real agent sessions, and the HTML report ---------------------------------------


def ingest(ws: Workspace, paths: list[Path], session_format: str, outcome: str = "unknown") -> IngestResult:
    """Import agent session transcripts (`claude-code` JSONL or `openai-messages` JSON) into raw/
    as trajectories for the next round, in one commit; a malformed file, or one that shares held-out
    text (`skills.leak_run`), writes nothing."""
    from .integrations.ingest import ingest as _ingest
    from .integrations.sessions import session_parser
    from .store.traces import Outcome

    parser, outcomes = session_parser(session_format), [o.value for o in Outcome]
    if outcome not in outcomes:
        raise WikiskillError(f"unknown outcome {outcome!r}: use {', '.join(outcomes)}")
    from .knowledge.leakage import workspace_held_out

    return _ingest(ws, [Path(path) for path in paths], parser, Outcome(outcome), workspace_held_out(ws.root))


def tasks_from_sessions(
    paths: list[Path],
    out: Path,
    session_format: str,
    split: str = "train",
    model: str | None = None,
    api_base: str | None = None,
    workspace: Path | None = None,
    model_factory: ModelFactory | None = None,
) -> SessionTasks:
    """Draft a task folder under `out/split/` from each session transcript: the user's first
    request as task.md, a rubric a model drafts from what the user accepted as rubric.md, and a
    REVIEW.md that keeps the suite from being used until a person has reviewed and deleted it.

    The drafting model: `model`/`api_base` when given, else the `judge` settings of the workspace
    at `workspace` (or around the current folder) when it has a judge model, else its agent's.
    Every file is read and every rubric drafted before anything is written."""
    from .integrations.session_tasks import tasks_from_sessions as _tasks_from_sessions
    from .integrations.sessions import session_parser
    from .llm.meter import Meter
    from .llm.model import LiteLLMModel
    from .roles.rubric_drafter import RubricDrafter

    parser = session_parser(session_format)
    role, settings, llm = _drafting_settings(workspace, model, api_base)
    if model_factory is not None:
        chat = model_factory(role)
    else:
        from .llm.credentials import missing_key

        missing = missing_key(settings)
        if missing:
            raise ConfigError(
                f"the drafting model {settings.model} needs {missing}: set it in the environment, "
                "or point --api-base at a local OpenAI-compatible server"
            )
        chat = LiteLLMModel(settings, llm, role, Meter())
    return _tasks_from_sessions(
        [Path(path) for path in paths], Path(out), parser, RubricDrafter(chat), str(settings.model), _split(split)
    )


def _drafting_settings(
    workspace: Path | None, model: str | None, api_base: str | None
) -> tuple[Role, RoleSettings, LLMSettings]:
    """The role whose model drafts rubrics, its settings and the LLM settings: the command line's
    model, else the workspace's judge (when it names a model), else its agent."""
    try:
        config = load_config(Workspace.open(workspace).root)
    except WorkspaceError:
        if workspace is not None:
            raise
        config = None
    if config is None and model is None:
        raise ConfigError(
            "name the model that drafts the rubrics with --model (and --api-base), or run the "
            "command inside a workspace"
        )
    if config is None:
        role, settings, llm = Role.AGENT, RoleSettings(model=model, api_base=api_base), LLMSettings()
    else:
        config = config.with_overrides(model=model, api_base=api_base)
        role = Role.JUDGE if config.judge.model else Role.AGENT
        settings, llm = config.role(role), config.llm
    if settings.model == OFFLINE_MODEL:
        raise ConfigError("drafting a rubric needs an LLM, not the offline model: pass --model")
    return role, settings, llm


def report(ws: Workspace, out: Path) -> Path:
    """Write the workspace's evolution (val scores, cost, skills timeline, wiki growth, the latest
    validation per task) as one static HTML page at `out`; returns its path."""
    from .history.htmlreport import write_report

    load_config(ws.root)
    return write_report(ws, out)


def live_report(ws: Workspace, port: int) -> LiveReportServer:
    """The report served on 127.0.0.1:`port` (0: any free port), refreshed in the browser as the
    steps of a running `evolve` land; it only reads the workspace. Bound here (a port in use is
    refused in one line); `serve_forever()` serves it until interrupted, `server_close()` ends it."""
    from .history.live import LiveReportServer

    load_config(ws.root)
    return LiveReportServer(ws, port)
