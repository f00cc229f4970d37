"""The `ray` executor: `workers` Ray actors, each an event loop running the tasks dealt to it.

The only module that imports Ray. It connects to `ray.address` (else `RAY_ADDRESS`) and ships
what the workers need in Ray's runtime environment: the wikiskill package with its data folders,
the workspace's files (relative `jsonl:` suites), and `ray.pip`. With no address it starts a
local Ray for the command, which needs nothing shipped and ends with the command (kill -9
included: `ray_reaper`) and admits only clients holding a token of the command's own (Ray's
servers listen on every interface, and Ray offers no setting to bind them to 127.0.0.1). A Ray the
program already started with `ray.init` is used as it is.

A suite read from a folder reaches the workers by content (`shipping`), through Ray's object
store. Ray's own messages (a node marked dead, a raylet's last log lines) go to `ray.log` in the
command's state folder, not to its terminal; when a node is lost, the tasks its workers held are
started again on workers elsewhere, and the command says so in one line.

With workers on more than one node, a task that fails on infrastructure is retried on a node that
has not tried it yet (on one it has only when every node has): its worker tries it once and hands
the failure back, and the command waits out the backoff (without holding up other tasks' outcomes)
before sending the next try, at most `infra.retries` of them (`run/infra.py` words the outcome).
On a single node the worker retries in place.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...contracts.roles import Roles
from ...contracts.running import AgentRecipe, Place
from ...core.config import Config
from ...core.errors import WikiskillError
from ...core.parts import EXECUTOR
from ...core.resources import data_dir
from ...roles.settings import Role
from ...store.traces import Usage
from .recipe import Assignment, TaskReport
from .remote import RemoteExecutor, WorkerDied
from .settings import RaySettings
from .shipping import SuiteArchive, pack, suite_folder
from .worker import WorkerRuntime

log = logging.getLogger(__name__)

_PACKAGE = Path(__file__).resolve().parents[2]
_DATA_FOLDERS = (("prompts", ""), ("workspace_template", ""), ("benchmarks", "example-qa"))
"""What the wheel carries in wikiskill/_data (pyproject's force-include), shipped to a cluster."""
RETRIES = 2
"""How many times a task is started again after the node running it was lost."""
NODE_VERDICT_S = 60.0
"""How long an unreachable worker waits for Ray to mark its node dead (30 s by Ray's defaults)."""
RAY_LOG = "ray.log"
AUTH = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")


class _Actor:
    """The worker runtime as a Ray actor (async methods: one event loop runs its tasks)."""

    def __init__(self, place: Place):
        self.runtime = WorkerRuntime(place)

    async def prepare(self, recipe: AgentRecipe, suite: SuiteArchive | None) -> tuple[str, str]:
        """Build the recipe's agent; the node this actor runs on (its id and address)."""
        self.runtime.prepare(recipe, suite)
        ray = _ray()
        return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()

    async def run(self, assignment: Assignment) -> TaskReport:
        return await self.runtime.run(assignment)


@dataclass(eq=False)
class _Worker:
    """One actor of the command: the node it runs on (its id and address, once prepared) and how
    many of its tasks are in flight. Compared by identity: two fresh workers are still two."""

    actor: Any
    node: str = ""
    address: str = ""
    running: int = 0


@EXECUTOR.builtin
class RayActors(RemoteExecutor):
    """`workers` Ray actors, on a local Ray started for the command or the cluster of `ray.address`."""

    def __init__(self, place: Place, workers: int, settings: RaySettings):
        self.place, self.size, self.settings = place, workers, settings
        self._workers: list[_Worker] = []
        self._pending: dict[Any, tuple[_Worker, Assignment]] = {}  # a task's outcome's ObjectRef -> its worker, task
        self._restarts: dict[tuple[str, str, str], int] = {}  # a task's starts after its node was lost
        self._waiting: list[tuple[float, Assignment]] = []  # infra retries and when they are due
        self._tried: dict[tuple[str, str, str], list[str]] = {}  # a retried task's nodes, in order
        self._owed: dict[Role, Usage] = {}  # usage of failed tries, reported with the next outcome
        self._prepared = ""
        self._shared: tuple[Any, Any] | None = None  # the recipe and the suite, in Ray's object store
        self._suites: dict[Path, Any] = {}  # a suite folder -> its packed archive in Ray's object store
        self._saved_env: dict[str, str | None] = {}
        self._place = place
        self._unquiet: Callable[[], None] | None = None
        self._started_ray = False
        self._reaper: subprocess.Popen[bytes] | None = None
        self._shipped: Path | None = None

    @classmethod
    def open(cls, config: Config, place: Place, team: Roles) -> RayActors:
        return cls(place, config.workers, config.ray)

    def start(self) -> None:
        if self._workers:
            return
        ray = _ray()
        place = self.place
        if not ray.is_initialized():
            address = self.settings.address or os.environ.get("RAY_ADDRESS")
            self._started_ray = True  # shut down on close, also after a failed start
            self._unquiet = _quiet(self.place.state_dir)
            try:
                if address:
                    self._shipped = _package_with_data()
                    ray.init(
                        address=address,
                        configure_logging=False,
                        log_to_driver=False,
                        runtime_env=cluster_runtime_env(self._shipped, self.place.root, self.settings.pip),
                    )
                    place = Place()
                else:
                    self._guard()
                    before = _children()
                    ray.init(
                        address="local",
                        num_cpus=self.settings.num_cpus,
                        include_dashboard=False,
                        configure_logging=False,
                        log_to_driver=False,
                    )
                    self._reaper = _reaper_of(_children() - before)
            except Exception as exc:  # noqa: BLE001 - Ray's own errors, told in one line
                self.close()
                where = f"connect to Ray at {address}" if address else "start a local Ray"
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise WikiskillError(f"cannot {where}: {reason}") from exc
        self._place = place
        self._check_resources(ray)
        self._workers = [_Worker(self._new_actor()) for _ in range(self.size)]

    def _check_resources(self, ray: Any) -> None:
        """Fail now, not hang, when the live nodes have no room for every worker's `ray.resources`:
        Ray would keep the workers it cannot place waiting for such a node for ever."""
        offered = _live_resources(ray)
        room = self._room(offered)
        if room is not None and room < self.size:
            self.close()
            named = sorted({name for has in offered for name in has if ":" not in name})
            raise WikiskillError(
                f"ray.resources asks each worker for {dict(self.settings.resources)}, and the cluster's "
                f"nodes have room for {room} of the {self.size} workers (they offer "
                f"{', '.join(named) or 'nothing'}): lower --workers, start a node with "
                f"`ray start --resources '{{...}}'` or change ray.resources in wikiskill.yaml"
            )

    def _room(self, offered: list[dict[str, float]]) -> int | None:
        """How many workers nodes offering `offered` can hold, by `ray.resources` (None: no limit)."""
        wanted = dict(self.settings.resources)
        if not wanted:
            return None
        return sum(min(int(has.get(name, 0) // need) for name, need in wanted.items()) for has in offered)

    def _new_actor(self) -> Any:
        ray = _ray()
        options = {"resources": dict(self.settings.resources), "scheduling_strategy": "SPREAD"}
        return ray.remote(_Actor).options(**options).remote(self._place)

    def prepare(self, recipe: AgentRecipe) -> None:
        if recipe.key != self._prepared:
            ray = _ray()
            self._shared = (ray.put(recipe), self._suite_ref(ray, recipe))
            self._place_workers(ray, self._workers)
            self._prepared = recipe.key

    def _place_workers(self, ray: Any, workers: list[_Worker]) -> None:
        """Send `workers` the shared recipe and suite, and learn the node each one runs on."""
        assert self._shared is not None
        placed = self._wait_for(ray, [worker.actor.prepare.remote(*self._shared) for worker in workers])
        for worker, (node, address) in zip(workers, placed, strict=True):
            worker.node, worker.address = node, address

    def _suite_ref(self, ray: Any, recipe: AgentRecipe) -> Any:
        """The suite's folder, packed and put in the object store once per command (None: no folder)."""
        found = suite_folder(recipe.config, self.place.root)
        if found is None:
            return None
        family, folder = found
        if folder not in self._suites:
            self._suites[folder] = ray.put(pack(family, folder))
        return self._suites[folder]

    def submit(self, assignment: Assignment) -> None:
        """Start the task on the least busy worker of the nodes that tried it least, not the one
        that tried it last (with workers on several nodes, its infra retries are the command's)."""
        if not assignment.moves and len({worker.node for worker in self._workers}) > 1:
            assignment = replace(assignment, moves=True)
        tried = self._tried.get(_task_of(assignment), [])

        def preference(worker: _Worker) -> tuple[int, bool, int]:
            return tried.count(worker.node), bool(tried) and worker.node == tried[-1], worker.running

        worker = min(self._workers, key=preference)
        self._pending[worker.actor.run.remote(assignment)] = (worker, assignment)
        worker.running += 1

    def finished(self) -> list[TaskReport]:
        ray = _ray()
        reports: list[TaskReport] = []
        while not reports:
            wait = self._send_due()
            if not self._pending:  # every task left is waiting out its backoff
                time.sleep(wait or 0.0)
                continue
            ready, rest = ray.wait(list(self._pending), num_returns=1, timeout=wait)
            if ready and rest:
                ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            reports = [report for ref in ready if (report := self._outcome(ray, ref)) is not None]
        reports[0], self._owed = replace(reports[0], usage=self._owed), {}
        return reports

    def _outcome(self, ray: Any, ref: Any) -> TaskReport | None:
        """The task's outcome, or None: its try failed on infrastructure and waits to go again, or
        its node was lost and it runs again elsewhere."""
        if ref not in self._pending:  # its node was lost: the task is running again elsewhere
            return None
        worker, assignment = self._pending[ref]
        try:
            report: TaskReport = ray.get(ref)
        except ray.exceptions.RayError as exc:
            lost = self._lost_node(ray, worker, exc) if isinstance(exc, ray.exceptions.RayActorError) else None
            if lost is None:
                self.close()
                raise WorkerDied(f"a Ray worker failed: {str(exc).splitlines()[0]}") from None
            self._replace_node(ray, lost)
            return None
        del self._pending[ref]
        worker.running -= 1
        for role, usage in report.usage.items():
            self._owed[role] = self._owed.get(role, Usage()) + usage
        task = _task_of(assignment)
        if report.again is not None:
            self._tried.setdefault(task, []).append(worker.node)
            again = replace(assignment, earlier=report.again.reasons)
            self._waiting.append((time.monotonic() + report.again.delay, again))
            return None
        self._tried.pop(task, None)
        return replace(report, usage={})

    def _send_due(self) -> float | None:
        """Submit the retries whose backoff is over; the seconds until the next one is (None: none waits)."""
        now = time.monotonic()
        due = [assignment for at, assignment in self._waiting if at <= now]
        self._waiting = [(at, assignment) for at, assignment in self._waiting if at > now]
        for assignment in due:
            self.submit(assignment)
        return min((at - now for at, _ in self._waiting), default=None)

    def _lost_node(self, ray: Any, worker: _Worker, error: Exception) -> str | None:
        """The id of the worker's node if Ray says the node is dead (else the actor itself failed).
        An actor that Ray only calls unreachable waits for Ray's verdict on its node."""
        node = worker.node
        unreachable = isinstance(error, ray.exceptions.ActorUnavailableError)
        deadline = time.monotonic() + (NODE_VERDICT_S if unreachable else 0.0)
        while True:
            alive = {found["NodeID"]: found["Alive"] for found in ray.nodes()}
            if node and not alive.get(node, False):
                return node
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.5)

    def _replace_node(self, ray: Any, node: str) -> None:
        """Replace the lost node's actors by new ones elsewhere, as many as the other nodes have room
        for, and start again each task they held (a task that ran out of tries fails the command);
        say it in one line."""
        lost = [worker for worker in self._workers if worker.node == node]
        address = lost[0].address
        again = [assignment for worker, assignment in self._pending.values() if worker in lost]
        self._workers = [worker for worker in self._workers if worker not in lost]
        self._pending = {ref: held for ref, held in self._pending.items() if held[0] not in lost}
        room = self._room(_live_resources(ray))
        made = len(lost) if room is None else max(0, min(len(lost), room - len(self._workers)))
        if not self._workers and not made:
            self.close()
            raise WorkerDied(
                f"Ray node {node[:12]} ({address}) was lost, and no other node has room for a worker "
                f"asking for {dict(self.settings.resources)}"
            )
        fresh = [_Worker(self._new_actor()) for _ in range(made)]
        self._place_workers(ray, fresh)
        self._workers += fresh
        left = len(self._workers)
        fewer = "" if made == len(lost) else f" ({left} worker{'' if left == 1 else 's'} left: no room for more)"
        log.warning(
            "Ray node %s (%s) was lost: %d task%s retried on other nodes%s",
            node[:12],
            address,
            len(again),
            "" if len(again) == 1 else "s",
            fewer,
        )
        for assignment in again:
            task = _task_of(assignment)
            restarts = self._restarts.get(task, 0) + 1
            if restarts > RETRIES:
                self.close()
                raise WorkerDied(f"task {assignment.task_id} was lost with its node {RETRIES + 1} times")
            self._restarts[task] = restarts
            self.submit(assignment)

    def _wait_for(self, ray: Any, refs: list[Any]) -> list[Any]:
        try:
            results: list[Any] = ray.get(refs)
            return results
        except ray.exceptions.RayError as exc:
            self.close()
            raise WorkerDied(f"a Ray worker failed: {str(exc).splitlines()[0]}") from None

    def close(self) -> None:
        if self._workers:
            ray = _ray()
            for worker in self._workers:
                ray.kill(worker.actor)
        if self._started_ray:
            _ray().shutdown()
        if self._unquiet is not None:
            self._unquiet()
            self._unquiet = None
        if self._reaper is not None:
            self._reaper.communicate()  # closing its stdin: it ends what shutdown left
        if self._shipped is not None and self._shipped != _PACKAGE:
            shutil.rmtree(self._shipped.parent, ignore_errors=True)  # Ray uploaded it at init
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if self._saved_env:
            _reread_auth()
        self._workers, self._pending, self._prepared = [], {}, ""
        self._started_ray, self._reaper, self._shipped, self._shared = False, None, None, None
        self._restarts, self._saved_env = {}, {}
        self._waiting, self._tried, self._owed, self._suites = [], {}, {}, {}

    def _guard(self) -> None:
        """A local Ray started for the command admits only clients holding this command's token
        (its processes inherit it), unless the environment already says how Ray authenticates."""
        if AUTH[0] in os.environ:
            return
        self._saved_env = {name: os.environ.get(name) for name in AUTH}
        os.environ.update({AUTH[0]: "token", AUTH[1]: secrets.token_hex(32)})
        _reread_auth()


def _task_of(assignment: Assignment) -> tuple[str, str, str]:
    return assignment.recipe_key, assignment.split, assignment.task_id


def _live_resources(ray: Any) -> list[dict[str, float]]:
    """What each live node of the cluster offers."""
    return [node["Resources"] for node in ray.nodes() if node["Alive"]]


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise WikiskillError("executor: ray needs Ray: pip install 'wikiskill[ray]'") from exc
    return ray


def _reread_auth() -> None:
    """Ray reads how it authenticates once per process: read again after the environment changed."""
    raylet = _ray()._raylet
    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()


def _quiet(state_dir: Path | None) -> Callable[[], None]:
    """Ray's own log lines, and what its nodes report to the driver (a node marked dead, a
    raylet's last log lines, which Ray prints on stdout even with `log_to_driver=False`), go to
    `ray.log` in the state folder (else the temporary folder), not to the command's terminal,
    until the returned function puts Ray's printing back as it was."""
    from ray._private import worker as ray_worker

    path = (state_dir or Path(tempfile.gettempdir())) / RAY_LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    to_log = logging.FileHandler(path, encoding="utf-8")
    names = ["ray", *(name for name in logging.root.manager.loggerDict if name.startswith("ray."))]
    saved = [(logger, logger.handlers, logger.propagate) for logger in map(logging.getLogger, names)]
    for ray_logger, _, _ in saved:
        ray_logger.handlers, ray_logger.propagate = [to_log], False
    printing = ray_worker.print_to_stdstream

    def to_file(data: dict[str, Any], ignore_prefix: bool) -> None:
        with path.open("a", encoding="utf-8") as log_file:
            ray_worker.print_worker_logs(data, log_file, ignore_prefix)

    def undo() -> None:
        ray_worker.print_to_stdstream = printing
        for ray_logger, handlers, propagate in saved:
            ray_logger.handlers, ray_logger.propagate = handlers, propagate
        to_log.close()

    ray_worker.print_to_stdstream = to_file
    return undo


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
