"""The library API that the CLI is a thin shell over, and that hosts and tests call directly."""

from __future__ import annotations

from pathlib import Path

from .config import CONFIG_FILE, OFFLINE_MODEL, Config, load_config, parse_config
from .errors import ConfigError, WikiskillError
from .evolve import EvolveResult
from .evolve import evolve as _evolve
from .harness import Harness, Reporter
from .llm import check_credentials
from .prompts import render
from .reports import RoundRow, Status, round_rows
from .reports import status as _status
from .rollback import rollback as _rollback
from .skills import Skill
from .skills import load_skills as _load_skills
from .skillsblock import render_skills
from .team import ModelFactory
from .traces import Trajectory
from .workspace import Workspace

INTERACTIVE_MAX_STEPS = 40
"""Text games need more actions than the generic default (walkthroughs are 14-20 actions)."""

__all__ = [
    "Workspace", "init_workspace", "open_workspace", "evolve", "evaluate", "status", "round_log",
    "load_skills", "show_skill", "prompt", "rollback",
]


def init_workspace(path: Path, benchmark: str = "textworld-cooking", model: str = "offline",
                   api_base: str | None = None, train: int | None = None, val: int | None = None,
                   test: int | None = None, concurrency: int = 4) -> Workspace:
    """Create a workspace from workspace_template/ with a validated wikiskill.yaml."""
    from .benchmarks import BUILTIN_QA, INTERACTIVE

    if benchmark.startswith("jsonl:"):
        directory = Path(benchmark[len("jsonl:"):]).expanduser().resolve()
        if not directory.is_dir():
            raise ConfigError(f"benchmark folder {directory} does not exist")
        benchmark = f"jsonl:{directory}"
    elif benchmark not in (*INTERACTIVE, *BUILTIN_QA):
        raise ConfigError(f"unknown benchmark {benchmark!r}: use textworld-cooking, example-qa or jsonl:DIR")
    generated = benchmark in INTERACTIVE
    if model == OFFLINE_MODEL and not generated:
        raise ConfigError(f"the offline model plays interactive benchmarks only; {benchmark} needs an LLM "
                          "(pass --model, e.g. --model openai/gpt-4o-mini)")
    defaults = Config(benchmark=benchmark)
    splits = {"train": train or defaults.splits.train, "val": val or defaults.splits.val,
              "test": test or defaults.splits.test}
    text = render("wikiskill.yaml", folder="workspace_template", benchmark=benchmark, model=model,
                  api_base=api_base, concurrency=concurrency, splits=splits if generated else None,
                  max_steps=INTERACTIVE_MAX_STEPS if generated else defaults.agent.max_steps)
    parse_config(text, CONFIG_FILE)
    return Workspace.create(Path(path), text)


def open_workspace(path: Path | None = None) -> Workspace:
    return Workspace.open(path)


def _harness(ws: Workspace, model: str | None, api_base: str | None, concurrency: int | None,
             workers: int | None, console=None, model_factory: ModelFactory | None = None) -> Harness:
    config = load_config(ws.root).with_overrides(model=model, api_base=api_base, concurrency=concurrency,
                                                 workers=workers)
    if model_factory is None:
        check_credentials(config)  # before any progress bar, lock or file: a missing key is one line
    reporter: Reporter | None = None
    if console is not None:
        from .progress import RichReporter

        reporter = RichReporter(console)
    return Harness(ws, config, reporter, model_factory)


def evolve(ws: Workspace, rounds: int, model: str | None = None, api_base: str | None = None,
           concurrency: int | None = None, workers: int | None = None, commit_human_edits: bool = False,
           console=None, model_factory: ModelFactory | None = None) -> EvolveResult:
    """Run or resume `rounds` rounds of evolution on the workspace."""
    harness = _harness(ws, model, api_base, concurrency, workers, console, model_factory)
    return _evolve(harness, rounds, commit_human_edits)


def evaluate(ws: Workspace, split: str, ref: str = "main", model: str | None = None,
             api_base: str | None = None, concurrency: int | None = None, workers: int | None = None,
             console=None, model_factory: ModelFactory | None = None) -> list[Trajectory]:
    """Score the skills at `ref` on a split. Writes nothing to git."""
    if split not in ("train", "val", "test"):
        raise WikiskillError(f"unknown split {split!r}: use val, test or train")
    harness = _harness(ws, model, api_base, concurrency, workers, console, model_factory)
    ws.resolve(ref)
    return harness.run_split(split, ref, f"eval {split}")  # type: ignore[arg-type]


def status(ws: Workspace) -> Status:
    return _status(ws)


def round_log(ws: Workspace) -> list[RoundRow]:
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
    settings = load_config(ws.root).skills
    if mode is not None:
        if mode not in ("full", "index", "retrieve"):
            raise WikiskillError(f"unknown mode {mode!r}: use full, index or retrieve")
        settings = settings.model_copy(update={"mode": mode})
    return render_skills(load_skills(ws, ref), settings, task)


def rollback(ws: Workspace, skill: str | None = None, round_number: int | None = None) -> list[str]:
    return _rollback(ws, skill, round_number)


# -- using the skills elsewhere: host API, export, lint, watch -----------------------------------

import typing  # noqa: E402  (an appended section: the module header stays as it was)

if typing.TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from .export import ExportResult
    from .host import SkillSet
    from .lint import Problem
    from .watch import WatchReport


def skill_set(path: Path | None = None, ref: str | None = "main", mode: str | None = None) -> SkillSet:
    """The skills of a workspace for a host agent (see wikiskill.host); ref=None: working tree."""
    from .host import SkillSet

    return SkillSet.open(path, ref, mode)  # type: ignore[arg-type]


def export(ws: Workspace, dest: Path, ref: str = "main") -> ExportResult:
    """Write the skills at `ref` into `dest` as Agent Skills folders (idempotent)."""
    from .export import export_skills

    return export_skills(ws, dest, ref)


def lint(ws: Workspace) -> list[Problem]:
    """Problems of skills/ and wiki/ in the working tree (uncommitted edits included)."""
    from .lint import lint_workspace

    return lint_workspace(ws.root)


def watch(ws: Workspace, on_report: Callable[[WatchReport], None], commit: bool = False,
          stop: threading.Event | None = None, timeout: float | None = None) -> None:
    """Lint every burst of saves under skills/ and wiki/; with `commit`, commit the valid edits."""
    from .watch import watch as _watch

    _watch(ws, on_report, commit=commit, stop=stop, timeout=timeout)


__all__ += ["skill_set", "export", "lint", "watch"]


# -- looking into rounds and models: show, doctor ------------------------------------------------

if typing.TYPE_CHECKING:
    from .doctor import RoleCheck
    from .roundstory import RoundStory


def show_round(ws: Workspace, round_number: int) -> RoundStory:
    """What happened in a round: traces sampled, pages changed, the proposer's reads and proposal
    (or why it was invalid), the per-task validation and the decision, all read from git."""
    from .roundstory import round_story

    return round_story(ws, round_number)


def doctor(ws: Workspace, model: str | None = None, api_base: str | None = None) -> list[RoleCheck]:
    """Probe each role's model once: reachable, latency, JSON output, tool protocol, context, price."""
    from .doctor import diagnose

    return diagnose(load_config(ws.root).with_overrides(model=model, api_base=api_base))


__all__ += ["show_round", "doctor"]
