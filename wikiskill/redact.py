"""Keep secrets out of everything wikiskill writes: traces, commits, the wiki, logs and errors."""

from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"(API_KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
REDACTED = "[REDACTED]"


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a secret (longest first)."""
    values = {value for name, value in os.environ.items() if _SECRET_NAME.search(name) and len(value) >= 8}
    return sorted(values, key=len, reverse=True)


def scrub(text: str) -> str:
    for value in secret_values():
        if value in text:
            text = text.replace(value, REDACTED)
    return text
