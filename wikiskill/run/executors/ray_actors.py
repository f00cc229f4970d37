"""The `ray` executor: `workers` Ray actors, each an event loop running the tasks dealt to it.

The only module that imports Ray. It connects to `ray.address` (else `RAY_ADDRESS`) and ships
what the workers need in Ray's runtime environment: the wikiskill package with its data folders,
the workspace's files (relative `jsonl:` suites), and `ray.pip`. With no address it starts a
local Ray for the command, which needs nothing shipped and ends with the command (kill -9
included: `ray_reaper`). A Ray the program already started with `ray.init` is used as it is.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ...contracts.roles import Roles
from ...contracts.running import AgentRecipe, Place
from ...core.config import Config
from ...core.errors import WikiskillError
from ...core.parts import EXECUTOR
from ...core.resources import data_dir
from .recipe import Assignment, TaskReport
from .remote import RemoteExecutor, WorkerDied
from .settings import RaySettings
from .worker import WorkerRuntime

_PACKAGE = Path(__file__).resolve().parents[2]
_DATA_FOLDERS = (("prompts", ""), ("workspace_template", ""), ("benchmarks", "example-qa"))
"""What the wheel carries in wikiskill/_data (pyproject's force-include), shipped to a cluster."""


class _Actor:
    """The worker runtime as a Ray actor (async methods: one event loop runs its tasks)."""

    def __init__(self, place: Place):
        self.runtime = WorkerRuntime(place)

    async def prepare(self, recipe: AgentRecipe) -> None:
        self.runtime.prepare(recipe)

    async def run(self, assignment: Assignment) -> TaskReport:
        return await self.runtime.run(assignment)


@EXECUTOR.builtin
class RayActors(RemoteExecutor):
    """`workers` Ray actors, on a local Ray started for the command or the cluster of `ray.address`."""

    def __init__(self, place: Place, workers: int, settings: RaySettings):
        self.place, self.size, self.settings = place, workers, settings
        self._actors: list[Any] = []
        self._running: list[int] = []
        self._pending: dict[Any, int] = {}  # the ObjectRef of a task's outcome -> its actor
        self._prepared = ""
        self._started_ray = False
        self._reaper: subprocess.Popen[bytes] | None = None
        self._shipped: Path | None = None

    @classmethod
    def open(cls, config: Config, place: Place, team: Roles) -> RayActors:
        return cls(place, config.workers, config.ray)

    def start(self) -> None:
        if self._actors:
            return
        ray = _ray()
        place = self.place
        if not ray.is_initialized():
            address = self.settings.address or os.environ.get("RAY_ADDRESS")
            self._started_ray = True  # shut down on close, also after a failed start
            try:
                if address:
                    self._shipped = _package_with_data()
                    ray.init(
                        address=address,
                        logging_level=logging.WARNING,
                        log_to_driver=False,
                        runtime_env=cluster_runtime_env(self._shipped, self.place.root, self.settings.pip),
                    )
                    place = Place()
                else:
                    before = _children()
                    ray.init(
                        address="local",
                        num_cpus=self.settings.num_cpus,
                        include_dashboard=False,
                        logging_level=logging.WARNING,
                        log_to_driver=False,
                    )
                    self._reaper = _reaper_of(_children() - before)
            except Exception as exc:  # noqa: BLE001 - Ray's own errors, told in one line
                self.close()
                where = f"connect to Ray at {address}" if address else "start a local Ray"
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise WikiskillError(f"cannot {where}: {reason}") from exc
        actor = ray.remote(_Actor)
        self._actors = [actor.remote(place) for _ in range(self.size)]
        self._running = [0] * self.size

    def prepare(self, recipe: AgentRecipe) -> None:
        if recipe.key != self._prepared:
            ray = _ray()
            shared = ray.put(recipe)
            self._wait_for(ray, [actor.prepare.remote(shared) for actor in self._actors])
            self._prepared = recipe.key

    def submit(self, assignment: Assignment) -> None:
        index = min(range(self.size), key=lambda i: self._running[i])
        self._pending[self._actors[index].run.remote(assignment)] = index
        self._running[index] += 1

    def finished(self) -> list[TaskReport]:
        ray = _ray()
        ready, rest = ray.wait(list(self._pending), num_returns=1)
        if rest:
            ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        for ref in ready:
            self._running[self._pending.pop(ref)] -= 1
        return self._wait_for(ray, ready)

    def _wait_for(self, ray: Any, refs: list[Any]) -> list[Any]:
        try:
            results: list[Any] = ray.get(refs)
            return results
        except ray.exceptions.RayError as exc:
            self.close()
            raise WorkerDied(f"a Ray worker failed: {str(exc).splitlines()[0]}") from None

    def close(self) -> None:
        if self._actors:
            ray = _ray()
            for actor in self._actors:
                ray.kill(actor)
        if self._started_ray:
            _ray().shutdown()
        if self._reaper is not None:
            self._reaper.communicate()  # closing its stdin: it ends what shutdown left
        if self._shipped is not None and self._shipped != _PACKAGE:
            shutil.rmtree(self._shipped.parent, ignore_errors=True)  # Ray uploaded it at init
        self._actors, self._running, self._pending, self._prepared = [], [], {}, ""
        self._started_ray, self._reaper, self._shipped = False, None, None


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise WikiskillError("executor: ray needs Ray: pip install 'wikiskill[ray]'") from exc
    return ray


def _children() -> set[int]:
    """This process's descendants (none known without psutil: Ray's workers still end with it,
    its agents a minute later)."""
    try:
        import psutil
    except ImportError:
        return set()
    return {child.pid for child in psutil.Process().children(recursive=True)}


def _reaper_of(pids: set[int]) -> subprocess.Popen[bytes] | None:
    """A watcher holding the ids of the Ray processes this command started (see ray_reaper)."""
    if not pids:
        return None
    return subprocess.Popen(
        [sys.executable, "-m", "wikiskill.run.executors.ray_reaper", *map(str, sorted(pids))], stdin=subprocess.PIPE
    )


def cluster_runtime_env(package: Path, root: Path | None, pip: list[str]) -> dict[str, Any]:
    """Ray's runtime environment for a cluster's workers: this wikiskill, the workspace, `pip`."""
    env: dict[str, Any] = {"py_modules": [str(package)]}
    if root is not None:
        env["working_dir"] = str(root)
        env["excludes"] = ["/.git/", "/.wikiskill/", "/.venv/"]
    if pip:
        env["pip"] = list(pip)
    return env


def _package_with_data() -> Path:
    """The wikiskill package folder as a wheel lays it out, data folders inside: an installed
    wheel's own, or a copy of a checkout's (whose data folders sit next to the package)."""
    if (_PACKAGE / "_data").is_dir():
        return _PACKAGE
    copy = Path(tempfile.mkdtemp(prefix="wikiskill-ray-")) / "wikiskill"
    shutil.copytree(_PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for folder, part in _DATA_FOLDERS:
        shutil.copytree(data_dir(folder) / part, copy / "_data" / folder / part)
    return copy
