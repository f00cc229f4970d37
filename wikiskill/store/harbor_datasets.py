"""Fetching `harbor:NAME@VERSION` (`benchmarks/harbor_registry.py`): the registry is read from
its path or URL, each task repository is checked out once per commit under the cache's
`harbor-git/` (`checkout.py`), and the dataset becomes a folder of links to its task folders,
made whole beside its place and moved in, so a killed fetch leaves nothing that looks finished.
Once made, it is read without the registry or the network."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from pydantic import ValidationError

from ..benchmarks import spec_of
from ..benchmarks.harbor_registry import (
    CHECKOUTS_DIR,
    DEFAULT_REGISTRY_URL,
    MADE,
    REGISTRY,
    Dataset,
    RegistryTask,
    cache_root,
    dataset_place,
    dataset_ref,
)
from ..benchmarks.registry import split_name
from ..core.config import Config
from ..core.errors import BenchmarkError
from .checkout import checkout

TASK_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,199}")
URL = re.compile(r"[a-z][a-z0-9+.-]*://")
FETCH_TIMEOUT_S = 60


def fetch_harbor_folder(argument: str, registry: str | None, root: Path | None) -> Path:
    """The folder `harbor:ARGUMENT` reads: the path, or the registry dataset it names, fetched
    the first time."""
    directory = Path(argument).expanduser()
    if not directory.is_absolute() and root is not None:
        directory = root / directory
    dataset = dataset_ref(argument)
    if dataset is not None and not directory.exists():
        return fetch_dataset(*dataset, registry)
    return directory


def fetch_for(config: Config, root: Path | None) -> None:
    """Fetch the dataset a workspace's `harbor:NAME@VERSION` names, unless it is here already."""
    fetch_named(config.benchmark, config.harbor.registry, root)


def fetch_named(benchmark: str, registry: str | None, root: Path | None) -> None:
    """Fetch the dataset of `registry` that the suite `benchmark` names (`harbor:NAME@VERSION`),
    unless it is here already; nothing for a suite that takes no registry datasets."""
    _, argument = split_name(benchmark)
    if argument and spec_of(benchmark).registry_datasets:
        fetch_harbor_folder(argument, registry, root)


def fetch_dataset(name: str, version: str, registry: str | None) -> Path:
    folder = dataset_place(name, version)
    if (folder / MADE).is_file():
        return folder
    source = registry or DEFAULT_REGISTRY_URL
    dataset = find_dataset(read_registry(source), name, version, source)
    return make_dataset(dataset, folder, None if URL.match(source) else Path(source).expanduser().resolve().parent)


def read_registry(source: str) -> list[Dataset]:
    """The datasets of a registry.json at a path or a URL."""
    try:
        if URL.match(source):
            with urllib.request.urlopen(source, timeout=FETCH_TIMEOUT_S) as answer:
                text = answer.read().decode("utf-8")
        else:
            text = Path(source).expanduser().read_text(encoding="utf-8")
    except (OSError, urllib.error.URLError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"cannot read the Harbor registry {source}: {getattr(exc, 'reason', exc)}") from None
    try:
        return REGISTRY.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BenchmarkError(f"{source}: not a Harbor registry ({where}: {first['msg']})") from None


def find_dataset(datasets: list[Dataset], name: str, version: str, source: str) -> Dataset:
    for dataset in datasets:
        if dataset.name == name and dataset.version == version:
            return dataset
    versions = [dataset.version for dataset in datasets if dataset.name == name]
    if versions:
        raise BenchmarkError(f"{source} has no version {version} of {name}; it has {', '.join(versions)}")
    raise BenchmarkError(f"{source} has no dataset {name} (harbor:NAME@VERSION)")


def make_dataset(dataset: Dataset, folder: Path, local_base: Path | None) -> Path:
    """A folder of links to the dataset's task folders, each repository checked out at its commit."""
    scratch = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        for task in dataset.tasks:
            if not TASK_NAME.fullmatch(task.name) or (scratch / task.name).exists():
                raise BenchmarkError(f"{dataset.name}@{dataset.version}: task name {task.name!r} is not a folder name")
            (scratch / task.name).symlink_to(_task_source(task, dataset, local_base), target_is_directory=True)
    except BenchmarkError:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    (scratch / MADE).write_text(dataset.model_dump_json(indent=2), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)  # one a killed run left unfinished
    os.rename(scratch, folder)
    return folder


def _task_source(task: RegistryTask, dataset: Dataset, local_base: Path | None) -> Path:
    where = f"{dataset.name}@{dataset.version} task {task.name}"
    if task.git_url is None:
        if local_base is None:
            raise BenchmarkError(f"{where}: a task without git_url needs a registry read from a file")
        root = local_base
    else:
        key = hashlib.sha256(task.git_url.encode()).hexdigest()[:16]
        place = cache_root() / CHECKOUTS_DIR / f"{key}-{task.git_commit_id or 'head'}"
        root = checkout(task.git_url, task.git_commit_id, place)
    source = (root / task.path).resolve()
    if not source.is_relative_to(root.resolve()) or not source.is_dir():
        raise BenchmarkError(f"{where}: no folder {task.path} in {task.git_url or root}")
    return source
