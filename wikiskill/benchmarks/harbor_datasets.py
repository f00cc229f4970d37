"""Fetching `harbor:NAME@VERSION` (`harbor_registry.py`), as the Harbor family loads it: the
registry is read from its path or URL, each task repository is checked out once per commit under
the cache's `harbor-git/` (`harbor_checkout.py`), and the dataset becomes a folder of links to its task folders,
made whole beside its place and moved in, so a killed fetch leaves nothing that looks finished.
The folder is keyed by the registry entry's digest: `init` and `check-suite` read the registry each
time, so an edited entry is fetched anew (and said to have changed), never served from the folder
of the old one. A workspace's dataset, once made, is read without the registry or the network."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core.errors import BenchmarkError, first_problem
from ..core.resources import cache_root
from .harbor_checkout import checkout
from .harbor_registry import (
    CHECKOUTS_DIR,
    DEFAULT_REGISTRY_URL,
    MADE,
    REGISTRY,
    Dataset,
    MadeDataset,
    RegistryTask,
    dataset_place,
    dataset_ref,
    entry_digest,
    made_places,
)
from .registry import spec_of, split_name

TASK_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,199}")
URL = re.compile(r"[a-z][a-z0-9+.-]*://")
FETCH_TIMEOUT_S = 60


class Fetched(BaseModel):
    """A registry dataset as fetched: its folder, its entry's digest, and a sentence saying how the
    entry differs from the one last fetched from the same registry, when it does."""

    model_config = ConfigDict(frozen=True)

    folder: Path
    digest: str
    changed: str | None = None


def fetch_named(
    benchmark: str, registry: str | None, root: Path | None, digest: str | None = None, refresh: bool = False
) -> Fetched | None:
    """Fetch the dataset of `registry` that the suite `benchmark` names (`harbor:NAME@VERSION`);
    None for a folder or a suite that takes no registry datasets. `digest`: the entry a workspace
    was made with, read from the cache without the registry once made, refused when the registry's
    entry is now another. `refresh`: make the folder again and check out anew the repositories
    taken at their head (tasks without a commit)."""
    _, argument = split_name(benchmark)
    if not argument or not spec_of(benchmark).registry_datasets:
        return None
    directory = Path(argument).expanduser()
    if not directory.is_absolute() and root is not None:
        directory = root / directory
    dataset = dataset_ref(argument)
    if dataset is None or directory.exists():
        return None
    return fetch_dataset(*dataset, registry, digest, refresh)


def fetch_dataset(name: str, version: str, registry: str | None, digest: str | None, refresh: bool) -> Fetched:
    if digest is not None and not refresh and (dataset_place(name, version, digest) / MADE).is_file():
        return Fetched(folder=dataset_place(name, version, digest), digest=digest)
    source = registry or DEFAULT_REGISTRY_URL
    dataset = find_dataset(read_registry(source), name, version, source)
    local_base = None if URL.match(source) else Path(source).expanduser().resolve().parent
    found = entry_digest(dataset, local_base)
    if digest is not None and found != digest:
        raise BenchmarkError(
            f"harbor:{name}@{version} in {source} is no longer the entry this workspace was made with "
            f"({_difference(_made_entry(name, version, digest), dataset) or f'digest {digest}, now {found}'}): "
            "a workspace keeps its dataset, so restore the entry or make a new workspace with `wikiskill init`"
        )
    folder = dataset_place(name, version, found)
    changed = _changed(name, version, source, found, dataset)
    if refresh or not (folder / MADE).is_file():
        make_dataset(dataset, folder, local_base, MadeDataset(source=source, digest=found, dataset=dataset), refresh)
    return Fetched(folder=folder, digest=found, changed=changed)


def _made_entry(name: str, version: str, digest: str) -> Dataset | None:
    try:
        return MadeDataset.model_validate_json((dataset_place(name, version, digest) / MADE).read_bytes()).dataset
    except (OSError, ValidationError):
        return None


def _changed(name: str, version: str, source: str, digest: str, dataset: Dataset) -> str | None:
    """How `dataset` differs from the entry of the same name last fetched from `source`; None when
    it is that entry or none was fetched before."""
    made = []
    for folder in made_places(name, version):
        try:
            entry = MadeDataset.model_validate_json((folder / MADE).read_bytes())
            made.append(((folder / MADE).stat().st_mtime, entry))
        except (OSError, ValidationError):
            continue
    earlier = [entry for _, entry in sorted(made, key=lambda pair: pair[0]) if entry.source == source]
    if not earlier or earlier[-1].digest == digest:
        return None
    difference = _difference(earlier[-1].dataset, dataset) or "its tasks' sources differ"
    return f"harbor:{name}@{version} changed in {source} since it was last fetched ({difference}): fetched anew"


def _difference(old: Dataset | None, new: Dataset) -> str | None:
    """The tasks added, removed and changed from `old` to `new`, in words."""
    if old is None:
        return None
    before = {task.name: task for task in old.tasks}
    after = {task.name: task for task in new.tasks}
    parts = []
    for label, names in (
        ("added", sorted(after.keys() - before.keys())),
        ("removed", sorted(before.keys() - after.keys())),
        ("changed", sorted(name for name in before.keys() & after.keys() if before[name] != after[name])),
    ):
        if names:
            parts.append(f"{len(names)} task{'s' if len(names) > 1 else ''} {label}: {', '.join(names)}")
    return "; ".join(parts) or None


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
        raise BenchmarkError(f"{source}: not a Harbor registry ({first_problem(exc)})") from None


def find_dataset(datasets: list[Dataset], name: str, version: str, source: str) -> Dataset:
    for dataset in datasets:
        if dataset.name == name and dataset.version == version:
            return dataset
    versions = [dataset.version for dataset in datasets if dataset.name == name]
    if versions:
        raise BenchmarkError(f"{source} has no version {version} of {name}; it has {', '.join(versions)}")
    raise BenchmarkError(f"{source} has no dataset {name} (harbor:NAME@VERSION)")


def make_dataset(dataset: Dataset, folder: Path, local_base: Path | None, made: MadeDataset, refresh: bool) -> Path:
    """A folder of links to the dataset's task folders, each repository checked out at its commit
    (`refresh`: those at their head checked out anew)."""
    scratch = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        for task in dataset.tasks:
            if not TASK_NAME.fullmatch(task.name) or (scratch / task.name).exists():
                raise BenchmarkError(f"{dataset.name}@{dataset.version}: task name {task.name!r} is not a folder name")
            (scratch / task.name).symlink_to(_task_source(task, dataset, local_base, refresh), target_is_directory=True)
    except BenchmarkError:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    (scratch / MADE).write_text(made.model_dump_json(indent=2), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)  # one a killed run left unfinished
    os.rename(scratch, folder)
    return folder


def _task_source(task: RegistryTask, dataset: Dataset, local_base: Path | None, refresh: bool) -> Path:
    where = f"{dataset.name}@{dataset.version} task {task.name}"
    if task.git_url is None:
        if local_base is None:
            raise BenchmarkError(f"{where}: a task without git_url needs a registry read from a file")
        root = local_base
    else:
        key = hashlib.sha256(task.git_url.encode()).hexdigest()[:16]
        place = cache_root() / CHECKOUTS_DIR / f"{key}-{task.git_commit_id or 'head'}"
        if refresh and task.git_commit_id is None:
            shutil.rmtree(place, ignore_errors=True)
        root = checkout(task.git_url, task.git_commit_id, place)
    source = (root / task.path).resolve()
    if not source.is_relative_to(root.resolve()) or not source.is_dir():
        raise BenchmarkError(f"{where}: no folder {task.path} in {task.git_url or root}")
    return source
