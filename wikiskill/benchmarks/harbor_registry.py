"""`harbor:NAME@VERSION`: a Harbor dataset by name, through a registry in Harbor's format.

A registry (`registry.json`) is a list of datasets, each with `name`, `version`, `description`
and `tasks`; a task names its folder (`name`), the git repository holding it (`git_url`, at
`git_commit_id`; none: the registry file's own folder) and its `path` there. Harbor's public
registry is read unless `harbor.registry` (set by `init --registry-path` or `--registry-url`)
names another. A dataset is fetched into the cache folder (`$WIKISKILL_CACHE_DIR`, else
~/.cache/wikiskill) by `harbor_datasets.py`, which checks its repositories out: here it is
only read, as `harbor-datasets/NAME@VERSION-DIGEST/`, a folder of links to its task folders.

The folder is keyed by the registry entry's digest (`entry_digest`: its tasks' names, git URLs,
commits and paths), not by NAME@VERSION alone: an entry edited under the same name and version,
or another registry's entry of that name, is another dataset in another folder, and a workspace
keeps the digest it was made with (`harbor.dataset_digest`), so a cached dataset never stands in
for a different one.
"""

from __future__ import annotations

import glob
import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, TypeAdapter

from ..core.errors import BenchmarkError
from ..core.resources import cache_root

DEFAULT_REGISTRY_URL = "https://raw.githubusercontent.com/laude-institute/harbor/main/registry.json"
"""Harbor's public registry (Harbor's own default)."""
DATASET_REF = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]*)@(?P<version>[A-Za-z0-9][\w.+-]*)")
DATASETS_DIR = "harbor-datasets"
CHECKOUTS_DIR = "harbor-git"
MADE = ".wikiskill-dataset.json"
"""Written last into a dataset's folder: the registry entry it was made from (`MadeDataset`)."""
DIGEST_CHARS = 16


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


class MadeDataset(BaseModel):
    """What a dataset's folder was made from: the registry it was read in and its entry."""

    model_config = ConfigDict(frozen=True)

    source: str
    digest: str
    dataset: Dataset


def entry_digest(dataset: Dataset, local_base: Path | None) -> str:
    """What identifies a registry entry's tasks: each one's name, git URL, commit and path, and
    for tasks without a git URL the folder of the registry file they lie beside."""
    tasks = [(task.name, task.git_url, task.git_commit_id, task.path) for task in dataset.tasks]
    local = str(local_base) if local_base is not None and any(task.git_url is None for task in dataset.tasks) else ""
    text = repr((dataset.name, dataset.version, tasks, local))
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]


def dataset_ref(argument: str) -> tuple[str, str] | None:
    """(name, version) when `argument` names a dataset, not a folder."""
    match = DATASET_REF.fullmatch(argument)
    return (match["name"], match["version"]) if match else None


def dataset_place(name: str, version: str, digest: str) -> Path:
    return cache_root() / DATASETS_DIR / f"{name}@{version}-{digest}"


def made_places(name: str, version: str) -> list[Path]:
    """The folders made for `NAME@VERSION`, one per registry entry it has been fetched from."""
    return sorted(
        folder
        for folder in (cache_root() / DATASETS_DIR).glob(f"{glob.escape(f'{name}@{version}')}-*")
        if (folder / MADE).is_file() and folder.name.rpartition("-")[0] == f"{name}@{version}"
    )


def made_dataset(name: str, version: str, digest: str | None) -> Path:
    """The dataset's folder of task folders, as `harbor_datasets.py` made it from the registry
    entry of `digest`; None (a workspace made before datasets were keyed): the only one made."""
    if digest is not None:
        folder = dataset_place(name, version, digest)
        if not (folder / MADE).is_file():
            raise BenchmarkError(
                f"harbor:{name}@{version} (registry entry {digest}) is not fetched into {folder.parent}: "
                "`wikiskill init` or `check-suite` with its registry fetches it"
            )
        return folder
    places = made_places(name, version)
    if len(places) == 1:
        return places[0]
    if not places:
        raise BenchmarkError(
            f"harbor:{name}@{version} is not fetched into {cache_root() / DATASETS_DIR}: "
            "`wikiskill init` or `check-suite` with its registry fetches it"
        )
    digests = ", ".join(place.name.rpartition("-")[2] for place in places)
    raise BenchmarkError(
        f"harbor:{name}@{version} is cached from {len(places)} different registry entries ({digests}): "
        "set harbor.dataset_digest in wikiskill.yaml to the one this workspace uses"
    )
