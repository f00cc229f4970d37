"""Keep secrets out of everything wikiskill writes: traces, commits, the wiki, logs and errors."""

from __future__ import annotations

import os
import re

# A variable holds a secret when one word of its name says so: OPENAI_API_KEY, HF_TOKEN,
# AWS_SECRET_ACCESS_KEY, SERPAPI_APIKEY, DB_PASSWORD (but not TOKENIZERS_PARALLELISM).
_SECRET_WORDS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS"})
MIN_SECRET_CHARS = 8
REDACTED = "[REDACTED]"


def is_secret_name(name: str) -> bool:
    return any(word in _SECRET_WORDS for word in re.split(r"[^A-Z0-9]+", name.upper()))


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a secret (longest first)."""
    values = {value for name, value in os.environ.items()
              if is_secret_name(name) and len(value.strip()) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def scrub(text: str) -> str:
    """`text` with every secret value replaced, ignoring case (a normalised, lowercased skill
    name must not carry a key either)."""
    lowered = text.lower()
    for value in secret_values():
        if value.lower() in lowered:
            text = re.sub(re.escape(value), REDACTED, text, flags=re.IGNORECASE)
            lowered = text.lower()
    return text
