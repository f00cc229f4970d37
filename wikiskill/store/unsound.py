"""The tasks an evolve left out of every split as unsound (their reference solution does not
score 1, or their untouched folder does not score 0), with the reasons, committed on main as
`raw/soundness/unsound.json` so that `status`, `show` and the report say which and why."""

from __future__ import annotations

import json

from .reads import WorkspaceReads

UNSOUND_FOLDER = "raw/soundness"
UNSOUND_FILE = "unsound.json"
UNSOUND_PATH = f"{UNSOUND_FOLDER}/{UNSOUND_FILE}"


def unsound_text(unsound: dict[str, str]) -> str:
    return json.dumps(dict(sorted(unsound.items())), indent=2) + "\n"


def read_unsound(ws: WorkspaceReads, ref: str) -> dict[str, str]:
    """The unsound tasks recorded at `ref`, by id, with why; empty when none were left out."""
    text = ws.read_files(ref, UNSOUND_FOLDER).get(UNSOUND_FILE)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(key): str(value) for key, value in data.items()} if isinstance(data, dict) else {}
