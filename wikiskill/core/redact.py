"""Keep secrets out of everything wikiskill writes: traces, commits, the wiki, logs and errors.

A trace is evidence, so only a value that can be a credential is scrubbed (`is_credential`): at
least MIN_SECRET_CHARS characters and not made of words alone, so the placeholders local servers
are given (`anything`, `EMPTY`, `ollama`, `sk-no-key-required`) are left in the text. A value is
replaced where it stands as a whole token (no letter or digit joined to it on either side), in
any letter case: a credential lowercased into a skill name is still that credential, while a
credential-shaped string in ordinary text in another case is not a word anyone writes.
"""

from __future__ import annotations

import functools
import json
import os
import re

# A variable holds a secret when one word of its name says so: OPENAI_API_KEY, HF_TOKEN,
# AWS_SECRET_ACCESS_KEY, SERPAPI_APIKEY, DB_PASSWORD (but not TOKENIZERS_PARALLELISM).
_SECRET_WORDS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS"})
MIN_SECRET_CHARS = 8
"""Shorter values are not secrets to scrub: replacing a 3-letter value everywhere would wreck text."""
_WORD_CHARACTER = re.compile(r"[^\W\d_]|[-_.\s]")
"""What words are made of: letters, and the `-`, `_`, `.` and spaces that join them."""
REDACTED = "[REDACTED]"
_JSON_START = ("{", "[", '"')
_UNICODE_ESCAPE = re.compile(r"(?<=\\)u([0-9a-fA-F]{4})")


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    return any(word in _SECRET_WORDS for word in re.split(r"[^A-Z0-9]+", name.upper()))


def is_credential(value: str) -> bool:
    """Whether `value` can be a credential rather than words: at least MIN_SECRET_CHARS characters
    holding a digit, a character other than a letter, `-`, `_`, `.` or a space, or lowercase and
    capital letters mixed past its first character (`Anything` and `ANYTHING` are words,
    `hf_AbCdEfGh` is not)."""
    value = value.strip()
    if len(value) < MIN_SECRET_CHARS:
        return False
    if any(character.isdigit() or not _WORD_CHARACTER.fullmatch(character) for character in value):
        return True
    rest = value[1:]
    return any(character.islower() for character in rest) and any(character.isupper() for character in rest)


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a secret and that can be a
    credential (`is_credential`), longest first."""
    values = {value for name, value in os.environ.items() if is_secret_name(name) and is_credential(value)}
    return sorted(values, key=len, reverse=True)


class Scrubber:
    """`scrub` with the secrets read from the environment once, when it is built: for a batch
    of texts (a commit scrubs every file and path it writes), where rescanning os.environ per
    text would cost more than the scrubbing."""

    def __init__(self) -> None:
        self._secrets = [(value, value.lower(), _whole_token(value)) for value in secret_values()]
        self._unescaped_secrets = [_unescaped(value).lower() for value, _, _ in self._secrets]

    def __call__(self, text: str) -> str:
        """`text` with every secret replaced. A text that is JSON (one document, or JSON Lines)
        has its decoded strings scrubbed too: there a secret can be written with escapes
        (`\\u0073k-...`, `\\/`), and one holding a `"` or `\\` is always escaped, so matching the
        raw text alone would miss it. Only a document that held such a secret is re-encoded."""
        text = self._plain(text)
        if self._secrets and "\\" in text and text.lstrip().startswith(_JSON_START) and self._may_hide_one(text):
            text = self._json_document(text)
        return text

    def _may_hide_one(self, text: str) -> bool:
        """Whether a secret might be written in `text` with escapes: a cheap test that spares
        decoding JSON which holds none (nearly all of it)."""
        loose = _unescaped(text).lower()
        return any(value in loose for value in self._unescaped_secrets)

    def _plain(self, text: str) -> str:
        lowered = text.lower()
        for _, lowered_value, pattern in self._secrets:
            if lowered_value in lowered:
                text = pattern.sub(REDACTED, text)
                lowered = text.lower()
        return text

    def _json_document(self, text: str) -> str:
        try:
            clean, changed = self._value(json.loads(text))
        except RecursionError:  # nested deeper than Python recurses: left as matched above
            return text
        except ValueError:
            lines = text.split("\n")  # JSON Lines ends a line at \n only; splitlines() also splits inside strings
            if len(lines) < 2:
                return text
            return "\n".join(self(line) for line in lines)  # JSON Lines: each line on its own
        return _encode(clean, text) if changed else text

    def _value(self, value: object) -> tuple[object, bool]:
        """A decoded JSON value with every string (keys too) scrubbed, and whether any changed."""
        if isinstance(value, str):
            clean = self(value)  # a string may hold JSON in turn (a tool call's arguments)
            return clean, clean != value
        if isinstance(value, list):
            items = [self._value(item) for item in value]
            return [item for item, _ in items], any(changed for _, changed in items)
        if isinstance(value, dict):
            cleaned: dict[str, object] = {}
            changed = False
            for key, item in value.items():
                clean_key = self(key)
                cleaned[clean_key], item_changed = self._value(item)
                changed = changed or item_changed or clean_key != key
            return cleaned, changed
        return value, False


def _whole_token(value: str) -> re.Pattern[str]:
    """`value` in any letter case where no letter or digit is joined to a letter or digit at
    either of its ends."""
    before = r"(?<![^\W_])" if value[0].isalnum() else ""
    after = r"(?![^\W_])" if value[-1].isalnum() else ""
    return re.compile(before + re.escape(value) + after, flags=re.IGNORECASE)


def _unescaped(text: str) -> str:
    """`text` with JSON escapes undone loosely, at every depth of JSON held in JSON strings:
    `\\uXXXX` behind any number of backslashes becomes its character, other backslashes go."""
    if "\\u" not in text:
        return text.replace("\\", "")
    surrogates = []

    def character(match: re.Match[str]) -> str:
        code = int(match.group(1), 16)
        surrogates.append(0xD800 <= code <= 0xDFFF)
        return chr(code)

    text = _UNICODE_ESCAPE.sub(character, text).replace("\\", "")
    if any(surrogates):  # a character beyond the BMP is escaped as a surrogate pair
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    return text


def _encode(value: object, like: str) -> str:
    """`value` as JSON laid out like the text it came from (indented or on one line, with its
    surrounding whitespace)."""
    body = json.dumps(value, ensure_ascii=False, indent=1 if "\n" in like.strip() else None)
    stripped = like.strip()
    start = like.index(stripped[0]) if stripped else 0
    return like[:start] + body + like[start + len(stripped) :]


def scrub(text: str) -> str:
    """`text` with every credential (`is_credential`) replaced where it is a whole token, ignoring
    case (a normalised, lowercased skill name must not carry a key either)."""
    return Scrubber()(text)
