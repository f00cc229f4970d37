"""Keep secrets out of everything wikiskill writes: traces, commits, the wiki, logs and errors."""

from __future__ import annotations

import functools
import os
import re

# A variable holds a secret when one word of its name says so: OPENAI_API_KEY, HF_TOKEN,
# AWS_SECRET_ACCESS_KEY, SERPAPI_APIKEY, DB_PASSWORD (but not TOKENIZERS_PARALLELISM).
_SECRET_WORDS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS"})
MIN_SECRET_CHARS = 8
REDACTED = "[REDACTED]"


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    return any(word in _SECRET_WORDS for word in re.split(r"[^A-Z0-9]+", name.upper()))


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a secret (longest first)."""
    values = {value for name, value in os.environ.items()
              if is_secret_name(name) and len(value.strip()) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


class Scrubber:
    """`scrub` with the secrets read from the environment once, when it is built: for a batch
    of texts (a commit scrubs every file and path it writes), where rescanning os.environ per
    text would cost more than the scrubbing."""

    def __init__(self) -> None:
        self._secrets = [(value, value.lower()) for value in secret_values()]

    def __call__(self, text: str) -> str:
        lowered = text.lower()
        for value, lowered_value in self._secrets:
            if lowered_value in lowered:
                text = re.sub(re.escape(value), REDACTED, text, flags=re.IGNORECASE)
                lowered = text.lower()
        return text


def scrub(text: str) -> str:
    """`text` with every secret value replaced, ignoring case (a normalised, lowercased skill
    name must not carry a key either)."""
    return Scrubber()(text)
