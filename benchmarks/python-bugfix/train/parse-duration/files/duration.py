"""Durations written like `1h30m` or `45s`, in seconds."""

import re

UNITS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """Seconds in `text`, e.g. `1h30m` -> 5400; ValueError for anything else."""
    match = re.match(r"(\d+)([hms])", text.strip())
    if not match:
        raise ValueError(f"not a duration: {text!r}")
    return int(match.group(1)) * UNITS[match.group(2)]
