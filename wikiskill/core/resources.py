"""Locate the top-level data folders both from a source checkout and from an installed wheel.

The wheel ships `prompts/`, `workspace_template/` and `benchmarks/` inside the package as
`wikiskill/_data/<name>`; an editable install or a checkout finds them next to the package.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"wikiskill data folder {name!r} is missing from this installation")


def cache_root() -> Path:
    """The machine's cache of what wikiskill fetches, generates and unpacks (games, Harbor
    datasets, images, suites shipped to workers): $WIKISKILL_CACHE_DIR if set (and non-empty),
    else ~/.cache/wikiskill."""
    return Path(os.environ.get("WIKISKILL_CACHE_DIR") or "~/.cache/wikiskill").expanduser()
