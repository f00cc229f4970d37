"""Locate the top-level data folders both from a source checkout and from an installed wheel.

The wheel ships `prompts/`, `workspace_template/` and `benchmarks/` inside the package as
`wikiskill/_data/<name>`; an editable install or a checkout finds them next to the package.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"wikiskill data folder {name!r} is missing from this installation")
