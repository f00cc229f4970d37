"""Learning from real agent sessions: transcripts ingested as trajectories, and task folders
drafted from them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.config import OFFLINE_MODEL
from ..core.errors import ConfigError, WikiskillError, WorkspaceError
from ..llm.settings import LLMSettings
from ..roles.settings import Role, RoleSettings
from ..run.team import ModelFactory
from ..store.settings import load_config
from ..store.workspace import Workspace
from .options import split_of

if TYPE_CHECKING:
    from ..integrations.ingest import IngestResult
    from ..integrations.session_tasks import SessionTasks


def ingest(ws: Workspace, paths: list[Path], session_format: str, outcome: str | None = None) -> IngestResult:
    """Import agent sessions into raw/ as trajectories for the next round, in one commit: session
    transcripts (`claude-code` JSONL, `openai-messages` JSON), ATIF trajectory files (`atif`), or
    the trials of Harbor job folders (`harbor-job`, each trial's outcome its verifier's reward). A
    malformed file, one that shares held-out text (`skills.leak_run`), or a Harbor trial of a task
    in the suite's val or test split writes nothing."""
    from ..core.parts import SESSION_FORMAT
    from ..core.redact import Scrubber
    from ..integrations.atif_in import ATIF_FORMAT, read_atif
    from ..integrations.harbor_job import HARBOR_JOB_FORMAT, read_job, refuse_held_tasks
    from ..integrations.ingest import Session, read_sessions
    from ..integrations.ingest import ingest as _ingest
    from ..integrations.sessions import session_parser
    from ..knowledge.leakage import workspace_held_out
    from ..store.traces import Outcome

    formats = [*SESSION_FORMAT.names(), ATIF_FORMAT, HARBOR_JOB_FORMAT]
    if session_format not in formats:
        raise WikiskillError(f"unknown transcript format {session_format!r}: use {', '.join(formats)}")
    outcomes = [o.value for o in Outcome]
    if outcome is not None and outcome not in outcomes:
        raise WikiskillError(f"unknown outcome {outcome!r}: use {', '.join(outcomes)}")
    if not paths:
        raise WikiskillError("name at least one file to ingest")
    files = [Path(path) for path in paths]
    said = Outcome(outcome or Outcome.UNKNOWN)
    if session_format == HARBOR_JOB_FORMAT:
        if outcome is not None:
            raise WikiskillError("--outcome is not for a Harbor job: each trial's outcome is its verifier's reward")
        config = load_config(ws.root)
        trials = [trial for job in files for trial in read_job(job, config.harbor.reward_key)]
        refuse_held_tasks(trials, held_task_splits(ws))
        sessions, what = [trial.session for trial in trials], "Harbor trial(s), outcomes by their rewards"
    elif session_format == ATIF_FORMAT:
        scrub = Scrubber()
        sessions, what = (
            [Session(path, read_atif(path, said, scrub)) for path in files],
            f"ATIF trajectory(ies), outcome {said.value}",
        )
    else:
        sessions = read_sessions(files, session_parser(session_format), said)
        what = f"{session_format} session(s), outcome {said.value}"
    return _ingest(ws, sessions, what, workspace_held_out(ws.root))


def held_task_splits(ws: Workspace) -> dict[str, str]:
    """The val and test tasks of the workspace's suite, by id, with their split. An interactive
    suite's are left out: its games are generated, and no Harbor trial plays one."""
    from ..benchmarks.base import BenchmarkKind
    from ..benchmarks.registry import load_benchmark

    config = load_config(ws.root)
    benchmark = load_benchmark(config, ws.root)
    if benchmark.spec.kind is BenchmarkKind.INTERACTIVE:
        return {}
    return {task.id: split for split in ("test", "val") for task in benchmark.tasks(split)}


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
    from ..integrations.session_tasks import tasks_from_sessions as _tasks_from_sessions
    from ..integrations.sessions import session_parser
    from ..llm.meter import Meter
    from ..llm.model import LiteLLMModel
    from ..roles.rubric_drafter import RubricDrafter

    parser = session_parser(session_format)
    role, settings, llm = _drafting_settings(workspace, model, api_base)
    if model_factory is not None:
        chat = model_factory(role)
    else:
        from ..llm.credentials import missing_key

        missing = missing_key(settings)
        if missing:
            raise ConfigError(
                f"the drafting model {settings.model} needs {missing}: set it in the environment, "
                "or point --api-base at a local OpenAI-compatible server"
            )
        chat = LiteLLMModel(settings, llm, role, Meter())
    return _tasks_from_sessions(
        [Path(path) for path in paths], Path(out), parser, RubricDrafter(chat), str(settings.model), split_of(split)
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
