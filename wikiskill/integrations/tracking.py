"""The experiment tracker an evolve run logs to (`tracking` in wikiskill.yaml), or none.

The loop calls `sync()` after the baseline and after each round, and `finish()` at the end; a
tracker reads what is in git and logs what it has not logged yet, so the loop passes it nothing.
With `tracking` unset, no tracker's package is imported.
"""

from __future__ import annotations

import os

from ..contracts.integrations import ExperimentTracker
from ..contracts.running import Reporter
from ..core.config import Config, Tracking
from ..core.errors import ConfigError
from ..store.workspace import Workspace

MLFLOW_URI_VARIABLE = "MLFLOW_TRACKING_URI"


class NoTracking:
    """`tracking` unset: logs nothing."""

    def sync(self) -> None:
        pass

    def finish(self) -> None:
        pass


def open_tracker(ws: Workspace, config: Config, reporter: Reporter) -> ExperimentTracker:
    """The tracker `config.tracking` names, connected; one that logs nothing when it is unset or
    its server cannot be reached (the tracker warns once; git keeps what it will log later)."""
    if config.tracking is Tracking.MLFLOW:
        uri = os.environ.get(MLFLOW_URI_VARIABLE, "").strip()
        if not uri:
            raise ConfigError(
                f"tracking: mlflow needs {MLFLOW_URI_VARIABLE}, the MLflow server to log to (e.g. http://127.0.0.1:5000)"
            )
        from .mlflow_tracking import MlflowTracker

        return MlflowTracker.open(ws, config, reporter, uri) or NoTracking()
    return NoTracking()
