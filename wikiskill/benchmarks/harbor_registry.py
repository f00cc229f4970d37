"""`harbor:NAME@VERSION`: a Harbor dataset by name, through a registry in Harbor's format.

A registry (`registry.json`) is a list of datasets, each with `name`, `version`, `description`
and `tasks`; a task names its folder (`name`), the git repository holding it (`git_url`, at
`git_commit_id`; none: the registry file's own folder) and its `path` there. Harbor's public
registry is read unless `harbor.registry` (set by `init --registry-path` or `--registry-url`)
names another. A dataset is fetched into the cache folder (`$WIKISKILL_CACHE_DIR`, else
~/.cache/wikiskill) by `store/harbor_datasets.py`, which checks its repositories out: here it is
only read, as `harbor-datasets/NAME@VERSION/`, a folder of links to its task folders.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, TypeAdapter

from ..core.errors import BenchmarkError

DEFAULT_REGISTRY_URL = "https://raw.githubusercontent.com/laude-institute/harbor/main/registry.json"
"""Harbor's public registry (Harbor's own default)."""
DATASET_REF = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]*)@(?P<version>[A-Za-z0-9][\w.+-]*)")
DATASETS_DIR = "harbor-datasets"
CHECKOUTS_DIR = "harbor-git"
MADE = ".wikiskill-dataset.json"
"""Written last into a dataset's folder: the registry entry it was made from."""


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


def dataset_place(name: str, version: str) -> Path:
    return cache_root() / DATASETS_DIR / f"{name}@{version}"


def made_dataset(name: str, version: str) -> Path:
    """The dataset's folder of task folders, as `store/harbor_datasets.py` made it."""
    folder = dataset_place(name, version)
    if not (folder / MADE).is_file():
        raise BenchmarkError(
            f"harbor:{name}@{version} is not fetched into {folder.parent}: "
            "`wikiskill init` or `check-suite` with its registry fetches it"
        )
    return folder
