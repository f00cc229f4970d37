"""`harbor:NAME@VERSION`: a Harbor dataset by name, through a registry in Harbor's format.

A registry (`registry.json`) is a list of datasets, each with `name`, `version`, `description`
and `tasks`; a task names its folder (`name`), the git repository holding it (`git_url`, at
`git_commit_id`; none: the registry file's own folder) and its `path` there. Harbor's public
registry is read unless `harbor.registry` (set by `init --registry-path` or `--registry-url`)
names another. Each repository is checked out once per commit under the cache folder
(`$WIKISKILL_CACHE_DIR`, else ~/.cache/wikiskill: `harbor-git/`), and the dataset becomes a
folder of links to its tasks (`harbor-datasets/NAME@VERSION/`), made whole before it is used;
once made, it is read without the registry or the network.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from ..core.errors import BenchmarkError
from ..store.checkout import checkout

DEFAULT_REGISTRY_URL = "https://raw.githubusercontent.com/laude-institute/harbor/main/registry.json"
"""Harbor's public registry (Harbor's own default)."""
DATASET_REF = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]*)@(?P<version>[A-Za-z0-9][\w.+-]*)")
TASK_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,199}")
DATASETS_DIR = "harbor-datasets"
CHECKOUTS_DIR = "harbor-git"
MADE = ".wikiskill-dataset.json"
"""Written last into a dataset's folder: the registry entry it was made from."""
FETCH_TIMEOUT_S = 60


class RegistryTask(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    git_url: str | None = None
    git_commit_id: str | None = None
    path: str


class Dataset(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    version: str
    description: str = ""
    tasks: list[RegistryTask]


REGISTRY = TypeAdapter(list[Dataset])


def dataset_ref(argument: str) -> tuple[str, str] | None:
    """(name, version) when `argument` names a dataset, not a folder."""
    match = DATASET_REF.fullmatch(argument)
    return (match["name"], match["version"]) if match else None


def cache_root() -> Path:
    return Path(os.environ.get("WIKISKILL_CACHE_DIR") or "~/.cache/wikiskill").expanduser()


def dataset_folder(name: str, version: str, registry: str | None) -> Path:
    """The dataset's folder of task folders, made from the registry the first time."""
    folder = cache_root() / DATASETS_DIR / f"{name}@{version}"
    if (folder / MADE).is_file():
        return folder
    source = registry or DEFAULT_REGISTRY_URL
    dataset = find_dataset(read_registry(source), name, version, source)
    return make_dataset(dataset, folder, _local_base(source))


def read_registry(source: str) -> list[Dataset]:
    """The datasets of a registry.json at a path or a URL."""
    try:
        if re.match(r"[a-z][a-z0-9+.-]*://", source):
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
    for task in dataset.tasks:
        if not TASK_NAME.fullmatch(task.name) or (scratch / task.name).exists():
            raise BenchmarkError(f"{dataset.name}@{dataset.version}: task name {task.name!r} is not a folder name")
        (scratch / task.name).symlink_to(_task_source(task, dataset, local_base), target_is_directory=True)
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
        root = checkout(
            task.git_url, task.git_commit_id, cache_root() / CHECKOUTS_DIR / f"{key}-{task.git_commit_id or 'head'}"
        )
    source = (root / task.path).resolve()
    if not source.is_relative_to(root.resolve()) or not source.is_dir():
        raise BenchmarkError(f"{where}: no folder {task.path} in {task.git_url or root}")
    return source


def _local_base(source: str) -> Path | None:
    if re.match(r"[a-z][a-z0-9+.-]*://", source):
        return None
    return Path(source).expanduser().resolve().parent
