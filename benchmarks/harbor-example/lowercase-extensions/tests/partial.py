"""Partial credit for a task's checks."""

import json
from pathlib import Path


def report(parts, kept=True):
    """Write each part's score and `reward`, their mean, as /logs/verifier/reward.json; every part
    scores 0 unless what the task had to leave alone is `kept`."""
    scores = {name: float(bool(ok and kept)) for name, ok in parts.items()}
    scores["reward"] = round(sum(scores.values()) / len(scores), 4)
    Path("/logs/verifier/reward.json").write_text(json.dumps(scores) + "\n")
    for name, score in scores.items():
        print(f"{name}: {score}")
