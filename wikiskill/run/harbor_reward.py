"""A Harbor verifier's reward, read as Harbor reads it from `/logs/verifier`.

`reward.txt` holds one number. `reward.json` is a flat map: the score is its `harbor.reward_key`
when that is set, else its key `reward`, else its only key; a map of several keys none of which is
`reward` names no score, and is refused rather than averaged (a count beside the reward, as in
`{"reward": 0, "checks": 3}`, would otherwise lift a failed task). A reward outside [0, 1], or
none at all, says the verifier is broken: an infrastructure failure, never a score.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..core.errors import ConfigError, InfrastructureError

REWARD_TEXT = "reward.txt"
REWARD_JSON = "reward.json"
DEFAULT_KEY = "reward"


def read_reward(logs: Path, reward_key: str | None, task_id: str) -> float:
    """The reward the verifier left in `logs`, in [0, 1]; InfrastructureError when it left none
    that reads as one, ConfigError when `reward_key` is not among reward.json's keys."""
    text_file, json_file = logs / REWARD_TEXT, logs / REWARD_JSON
    if text_file.is_file():
        text = text_file.read_text(encoding="utf-8", errors="replace").strip()
        try:
            value = float(text)
        except ValueError:
            raise InfrastructureError(
                f"{task_id}: the verifier's {REWARD_TEXT} holds no number ({text[:80]!r})"
            ) from None
        where = REWARD_TEXT
    elif json_file.is_file():
        value, where = _json_reward(json_file, reward_key, task_id)
    else:
        raise InfrastructureError(f"{task_id}: the verifier wrote no {REWARD_TEXT} or {REWARD_JSON}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InfrastructureError(f"{task_id}: the verifier's reward {value:g} ({where}) is outside [0, 1]")
    return value


def _json_reward(path: Path, reward_key: str | None, task_id: str) -> tuple[float, str]:
    try:
        rewards = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise InfrastructureError(f"{task_id}: the verifier's {REWARD_JSON} is not JSON ({exc})") from None
    if not isinstance(rewards, dict) or not rewards:
        raise InfrastructureError(f"{task_id}: the verifier's {REWARD_JSON} is not a map of named rewards")
    keys = ", ".join(sorted(rewards))
    if reward_key is not None:
        if reward_key not in rewards:
            raise ConfigError(
                f"harbor.reward_key {reward_key!r} is not a key of {task_id}'s {REWARD_JSON} (its keys: {keys})"
            )
        key = reward_key
    elif DEFAULT_KEY in rewards:
        key = DEFAULT_KEY
    elif len(rewards) == 1:
        key = next(iter(rewards))
    else:
        raise InfrastructureError(
            f"{task_id}: the verifier's {REWARD_JSON} has several keys ({keys}) and none named "
            f"{DEFAULT_KEY!r}: set harbor.reward_key to the one that is the score"
        )
    value = rewards[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InfrastructureError(f"{task_id}: the verifier's {REWARD_JSON} key {key!r} is no number ({value!r})")
    return float(value), f"{REWARD_JSON} key {key!r}"
