"""Task suites on their own, outside any workspace's runs: the benchmark families, a suite's
references checked, a container suite read as init shows it, its base image and its export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..benchmarks import SPLITS, FamilyListing
from ..core.config import Config
from ..core.resources import cache_root
from ..store.settings import load_config
from ..store.workspace import Workspace

if TYPE_CHECKING:
    from ..benchmarks.harbor import ContainerSuite
    from ..benchmarks.harbor_export import HarborExport
    from ..environments.base_image import BaseImage
    from ..run.suite_check import TaskCheck


def harbor_suite(ws: Workspace) -> ContainerSuite | None:
    """The workspace's Harbor suite as its settings read it (`unreadable` says which tasks were
    left out and why); None for other suites."""
    from ..benchmarks import load_benchmark, spec_of
    from ..benchmarks.harbor import ContainerSuite

    config = load_config(ws.root)
    if not spec_of(config.benchmark).containers:
        return None
    suite = load_benchmark(config, ws.root)
    return suite if isinstance(suite, ContainerSuite) else None


def suite_network(ws: Workspace) -> tuple[int, int, bool] | None:
    """How many of a Harbor suite's tasks need the network in some phase, of how many, and
    whether the engine has a bridge network to give them; None for other suites."""
    from ..environments.network import EngineNetwork
    from ..environments.runtime import open_runtime

    suite = harbor_suite(ws)
    if suite is None:
        return None
    config = load_config(ws.root)
    needing = sum(task.config.needs_network for task in suite.by_id.values())
    network = EngineNetwork(open_runtime(config.environment.runtime), config.environment.host_network)
    return needing, len(suite.by_id), network.host_network or network.has_bridge


def check_suite(
    path: Path | str,
    runtime: str = "docker",
    concurrency: int = 2,
    registry: str | None = None,
    refresh: bool = False,
    notify: Callable[[str], object] = lambda _: None,
) -> list[TaskCheck]:
    """Each task's reference scored as a run scores it. A Harbor suite's tasks are played by
    `oracle` (must score 1) and `nop` (must score 0) in containers, build logs going to
    `$WIKISKILL_CACHE_DIR/images` (else ~/.cache/wikiskill/images); a task-folder suite (`tasks:PATH`,
    or a folder with suite.yaml) scores each task's solution/ laid over its files (1) and its files
    untouched (0), or a QA task's answer (1) and no answer (0). `harbor:NAME@VERSION` is a dataset
    of the Harbor registry `registry` (a path or URL; default: Harbor's public one), read each time:
    `notify` hears when its entry changed since it was last fetched here, and `refresh` fetches it
    anew even when it did not."""
    import asyncio

    from ..benchmarks import load_benchmark, spec_of
    from ..benchmarks.harbor import HARBOR, ContainerSuite
    from ..benchmarks.harbor_datasets import fetch_named
    from ..benchmarks.settings import HarborSettings
    from ..benchmarks.task_folders import SUITE_FILE, TaskFolders
    from ..core.errors import BenchmarkError, choice
    from ..environments.settings import ContainerRuntime, EnvironmentSettings
    from ..run.folder_check import check_folders
    from ..run.harbor_tasks import open_setup
    from ..run.suite_check import check_suite as _check_suite

    text = str(path)
    folder = Path(text.removeprefix("tasks:")).expanduser()
    if text.startswith("tasks:") or (folder / SUITE_FILE).is_file():
        return sorted(check_folders(TaskFolders(folder)), key=_by_id)
    if not folder.exists() and not spec_of(text).containers:
        return _check_named_suite(text)
    benchmark = HARBOR.benchmark_name(str(folder)) if folder.exists() else text
    fetched = fetch_named(benchmark, registry, Path.cwd(), refresh=refresh)
    if fetched is not None and fetched.changed:
        notify(fetched.changed)
    digest = None if fetched is None else fetched.digest
    config = Config(benchmark=benchmark, harbor=HarborSettings(registry=registry, dataset_digest=digest))
    suite = load_benchmark(config, Path.cwd())
    if not isinstance(suite, ContainerSuite):
        raise BenchmarkError(f"{config.benchmark} is no suite of containers that check-suite can play")
    settings = EnvironmentSettings(runtime=choice(ContainerRuntime, runtime, "container runtime"))
    cache = cache_root()
    setup = open_setup(settings, cache, workspace=suite.directory, harbor=suite.settings)
    return asyncio.run(_check_suite(suite, setup, concurrency))


def _check_named_suite(name: str) -> list[TaskCheck]:
    """Each task of a named suite (its default splits) under its known-good policy (a game's
    walkthrough, a tool-use task's reference calls, a QA task's answer), which must score 1, and
    doing nothing, which must score 0."""
    from ..benchmarks import canonical_name, load_benchmark
    from ..benchmarks.reference import play_nothing, play_reference
    from ..run.suite_check import TaskCheck

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


def benchmarks() -> list[FamilyListing]:
    """Every registered benchmark family (built-in and plugins) with what it needs."""
    from ..benchmarks import list_families

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
    from ..core.errors import choice
    from ..environments.base_image import DEFAULT_BASE_IMAGE, make_base_image
    from ..environments.settings import ContainerRuntime

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
    from ..benchmarks.harbor_export import SuiteFormat, export_harbor
    from ..core.errors import choice
    from ..environments.base_image import DEFAULT_BASE_IMAGE

    choice(SuiteFormat, task_format, "task suite format")
    return export_harbor(Path(str(suite).removeprefix("tasks:")), out, base_image or DEFAULT_BASE_IMAGE)
