"""Learning from real agent sessions: transcripts ingested as trajectories, and task folders
drafted from them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.config import OFFLINE_MODEL, LLMSettings, Role, RoleSettings
from ..core.errors import ConfigError, WikiskillError, WorkspaceError
from ..run.team import ModelFactory
from ..store.settings import load_config
from ..store.workspace import Workspace
from .options import split_of

if TYPE_CHECKING:
    from ..integrations.ingest import IngestResult
    from ..integrations.session_tasks import SessionTasks


def ingest(ws: Workspace, paths: list[Path], session_format: str, outcome: str = "unknown") -> IngestResult:
    """Import agent session transcripts (`claude-code` JSONL or `openai-messages` JSON) into raw/
    as trajectories for the next round, in one commit; a malformed file, or one that shares held-out
    text (`skills.leak_run`), writes nothing."""
    from ..integrations.ingest import ingest as _ingest
    from ..integrations.sessions import session_parser
    from ..store.traces import Outcome

    parser, outcomes = session_parser(session_format), [o.value for o in Outcome]
    if outcome not in outcomes:
        raise WikiskillError(f"unknown outcome {outcome!r}: use {', '.join(outcomes)}")
    from ..knowledge.leakage import workspace_held_out

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
