"""MLflow tracking (`tracking: mlflow`): one MLflow run per workspace evolution, a nested run per
round, on the server `MLFLOW_TRACKING_URI` names.

Logging follows git, never the other way: `sync()` logs the baseline and each closed round that
the MLflow run does not hold yet, read back from the round's commits (`round_record`). A round's
nested run is marked FINISHED only once all of it is logged, and its values reach the parent's
charts (metrics at step = round) in one batch whose `round` metric says it landed; so after a
kill -9 at any point, a resumed evolve deletes a half-logged nested run and logs the round again,
and no round is logged twice. The run's id is kept in .wikiskill/mlflow.json; lost, it is found
again from the workspace's git tag `tracking/mlflow/<run id>`.

Tracking never stalls or fails a run: the server gets a short bounded connect before anything is
asked of it (and the client few retries), and the first request that fails turns tracking off
for the rest of the command with one warning; the next command that reaches the server logs the
rounds it missed, as after a kill.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mlflow.entities import Metric, Param, RunStatus, RunTag, ViewType
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID

from ..contracts.running import Reporter
from ..core.config import Config
from ..core.endpoints import unreachable, without_login
from ..store.rounds import completed_rounds, round_label
from ..store.workspace import Workspace
from .round_record import Record, baseline_record, round_record, settings_params, workspace_id

EXPERIMENT_VARIABLE = "MLFLOW_EXPERIMENT_NAME"
DEFAULT_EXPERIMENT = "wikiskill"
STATE_FILE = "mlflow.json"
WORKSPACE_TAG = "wikiskill.workspace"
PATH_TAG = "wikiskill.path"
GIT_TAG = "tracking/mlflow/"
"""The workspace's git tag `tracking/mlflow/<run id>` (at its first commit) names its MLflow run."""
RUN_NAME = "evolution"
CLIENT_LIMITS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}
"""The MLflow client's retries and per-request timeout, where the environment sets none (its own
defaults retry for minutes)."""
ROUND_TAG = "wikiskill.round"
LANDED = "round"
"""The parent's metric, logged in the one request that carries a round's values to the parent: its
steps are the rounds logged."""


class MlflowTracker:
    def __init__(self, ws: Workspace, config: Config, reporter: Reporter, client: MlflowClient, run_id: str, uri: str):
        self.ws, self.config, self.reporter = ws, config, reporter
        self.client, self.run_id, self.uri = client, run_id, uri
        self.off = False
        """Set by the first failed request: nothing more is asked of the server in this command."""

    @classmethod
    def open(cls, ws: Workspace, config: Config, reporter: Reporter, uri: str) -> MlflowTracker | None:
        """The tracker of the workspace's MLflow run; None, after one warning, when the server
        cannot be reached."""
        os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")  # progress lines are the reporter's
        for name, value in CLIENT_LIMITS.items():
            os.environ.setdefault(name, value)
        problem = unreachable(uri)
        if problem is not None:
            reporter.info(_off(uri, problem))
            return None
        client = MlflowClient(tracking_uri=uri)
        try:
            run_id = _evolution_run(ws, client, uri)
            client.update_run(run_id, status=RunStatus.to_string(RunStatus.RUNNING))
        except (MlflowException, OSError) as exc:
            reporter.info(_off(uri, _said(exc, uri)))
            return None
        reporter.info(f"tracking in MLflow: run {run_id}")
        return cls(ws, config, reporter, client, run_id, uri)

    def sync(self) -> None:
        """Log what git holds and this run does not; the first failure turns tracking off."""
        if self.off:
            return
        try:
            self._log_settings()
            landed = {m.step for m in self.client.get_metric_history(self.run_id, LANDED)}
            baseline = baseline_record(self.ws)
            if baseline is not None and 0 not in landed:
                self._log(self.run_id, Record(params=baseline.params))
                self._land(0, baseline)
            rounds = self._round_runs()
            for number in range(1, completed_rounds(self.ws) + 1):
                if number in landed and number in rounds:
                    continue
                record = round_record(self.ws, number)
                if record is None:
                    continue
                if number not in rounds:
                    self._log_round(number, record)
                if number not in landed:
                    self._land(number, record)
        except (MlflowException, OSError) as exc:
            self._turn_off(exc)

    def finish(self) -> None:
        if self.off:
            return
        try:
            self.client.set_terminated(self.run_id, RunStatus.to_string(RunStatus.FINISHED))
        except (MlflowException, OSError) as exc:
            self._turn_off(exc)

    def _turn_off(self, exc: BaseException) -> None:
        self.off = True
        self.reporter.info(_off(self.uri, _said(exc, self.uri)))

    def _log_settings(self) -> None:
        """The settings as params, those the run lacks (params cannot change: a round's own nested
        run carries the settings it was logged under)."""
        held = self.client.get_run(self.run_id).data.params
        missing = {key: value for key, value in settings_params(self.config).items() if key not in held}
        if missing:
            self._log(self.run_id, Record(params=missing))

    def _round_runs(self) -> dict[int, str]:
        """Round -> id of its finished nested run; a nested run left unfinished by a kill is deleted."""
        runs: dict[int, str] = {}
        experiment = self.client.get_run(self.run_id).info.experiment_id
        nested = self.client.search_runs(
            [experiment], f"tags.`{MLFLOW_PARENT_RUN_ID}` = '{self.run_id}'", run_view_type=ViewType.ACTIVE_ONLY
        )
        for run in nested:
            number = run.data.tags.get(ROUND_TAG, "")
            if run.info.status != RunStatus.to_string(RunStatus.FINISHED) or not number.isdigit():
                self.client.delete_run(run.info.run_id)
            elif int(number) not in runs:
                runs[int(number)] = run.info.run_id
            else:
                self.client.delete_run(run.info.run_id)
        return runs

    def _log_round(self, number: int, record: Record) -> None:
        tags = {MLFLOW_PARENT_RUN_ID: self.run_id, ROUND_TAG: str(number), WORKSPACE_TAG: workspace_id(self.ws)}
        run = self.client.create_run(
            self.client.get_run(self.run_id).info.experiment_id, tags=tags, run_name=round_label(number)
        )
        params = settings_params(self.config) | record.params
        self._log(run.info.run_id, Record(params=params, metrics=record.metrics, tags=record.tags), step=number)
        for name, text in record.artifacts.items():
            self.client.log_text(run.info.run_id, text, name)
        self.client.set_terminated(run.info.run_id, RunStatus.to_string(RunStatus.FINISHED))

    def _land(self, number: int, record: Record) -> None:
        """The round's metrics on the parent at step `number`, with `round` last, in one batch."""
        metrics = {**record.metrics, LANDED: float(number)}
        self._log(self.run_id, Record(metrics=metrics), step=number)

    def _log(self, run_id: str, record: Record, step: int = 0) -> None:
        now = int(time.time() * 1000)
        self.client.log_batch(
            run_id,
            metrics=[Metric(key, float(value), now, step) for key, value in record.metrics.items()],
            params=[Param(key, value) for key, value in record.params.items()],
            tags=[RunTag(key, value) for key, value in record.tags.items()],
        )


def _evolution_run(ws: Workspace, client: MlflowClient, uri: str) -> str:
    """The workspace's MLflow run on this server: the one .wikiskill/mlflow.json names, else one a
    `tracking/mlflow/<run id>` tag of the workspace names, else the one tagged with the workspace's
    id and folder (made, then killed before its git tag), else a new one (and its git tag)."""
    state = ws.state_dir / STATE_FILE
    identity = workspace_id(ws)
    kept = _read_state(state)
    named = [str(kept.get("run_id"))] if kept.get("tracking_uri") == uri and kept.get("workspace") == identity else []
    named += sorted(ws.refs(f"refs/tags/{GIT_TAG}"))
    run_id = next((run for run in (name.removeprefix(GIT_TAG) for name in named) if _active(client, run)), None)
    if run_id is None:
        experiment = _experiment(client)
        tags = {WORKSPACE_TAG: identity, PATH_TAG: str(ws.root)}
        found = _search(client, experiment, tags) if "'" not in str(ws.root) else []
        run_id = found[0] if found else client.create_run(experiment, tags=tags, run_name=RUN_NAME).info.run_id
    if f"{GIT_TAG}{run_id}" not in ws.refs(f"refs/tags/{GIT_TAG}"):
        ws.tag(f"{GIT_TAG}{run_id}", identity)
    state.parent.mkdir(parents=True, exist_ok=True)
    scratch = state.with_suffix(".tmp")
    scratch.write_text(json.dumps({"tracking_uri": uri, "workspace": identity, "run_id": run_id}) + "\n")
    scratch.replace(state)
    return run_id


def _active(client: MlflowClient, run_id: str) -> bool:
    try:
        return client.get_run(run_id).info.lifecycle_stage == "active"
    except MlflowException:
        return False


def _experiment(client: MlflowClient) -> str:
    name = os.environ.get(EXPERIMENT_VARIABLE, "").strip() or DEFAULT_EXPERIMENT
    experiment = client.get_experiment_by_name(name)
    return experiment.experiment_id if experiment is not None else client.create_experiment(name)


def _search(client: MlflowClient, experiment: str, tags: dict[str, str]) -> list[str]:
    """Ids of the active runs of `experiment` with these tags, oldest first."""
    where = " and ".join(f"tags.`{key}` = '{value}'" for key, value in tags.items())
    runs = client.search_runs(
        [experiment], where, run_view_type=ViewType.ACTIVE_ONLY, order_by=["attributes.start_time ASC"]
    )
    return [run.info.run_id for run in runs]


def _read_state(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _off(uri: str, why: str) -> str:
    """The one warning of a command whose tracking went off."""
    return (
        f"warning: tracking: mlflow could not reach {without_login(uri)} ({why}); tracking is off for "
        "this command, and the next command that reaches it logs the rounds it missed"
    )


def _said(exc: BaseException, uri: str) -> str:
    """The first line of what the MLflow client said, its address without a login."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0].replace(uri, without_login(uri))
