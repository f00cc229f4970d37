"""A Harbor verifier's reward, read as Harbor reads it from `/logs/verifier`.

`reward.txt` holds one number. `reward.json` is a flat map: the score is its `harbor.reward_key`
when that is set, else its key `reward`, else its only key; a map of several keys none of which is
`reward` names no score, and is refused rather than averaged (a count beside the reward, as in
`{"reward": 0, "checks": 3}`, would otherwise lift a failed task). A reward outside [0, 1], or
none at all, says the verifier is broken: an infrastructure failure, never a score.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

from pydantic import JsonValue, RootModel, Strict, TypeAdapter, ValidationError

from ..core.errors import ConfigError, InfrastructureError

REWARD_TEXT = "reward.txt"
REWARD_JSON = "reward.json"
DEFAULT_KEY = "reward"
NUMBER: TypeAdapter[float] = TypeAdapter(Annotated[float, Strict()])
"""A reward.json value that is a score: an int or a float, never a bool or a string."""


class VerifierRewards(RootModel[dict[str, JsonValue]]):
    """A verifier's reward.json: rewards by name, the score one of them (`score`)."""

    def score(self, reward_key: str | None, task_id: str) -> tuple[float, str]:
        """The score and where it was read: the key `reward_key`, else `reward`, else the only one."""
        rewards = self.root
        if not rewards:
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
        try:
            value = NUMBER.validate_python(rewards[key])
        except ValidationError:
            raise InfrastructureError(
                f"{task_id}: the verifier's {REWARD_JSON} key {key!r} is no number ({rewards[key]!r})"
            ) from None
        return value, f"{REWARD_JSON} key {key!r}"


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
        value, where = _json_rewards(json_file, task_id).score(reward_key, task_id)
    else:
        raise InfrastructureError(f"{task_id}: the verifier wrote no {REWARD_TEXT} or {REWARD_JSON}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InfrastructureError(f"{task_id}: the verifier's reward {value:g} ({where}) is outside [0, 1]")
    return value


def _json_rewards(path: Path, task_id: str) -> VerifierRewards:
    try:
        return VerifierRewards.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "json_invalid":
            said = exc.errors()[0]["msg"]
            raise InfrastructureError(f"{task_id}: the verifier's {REWARD_JSON} is not JSON ({said})") from None
        raise InfrastructureError(f"{task_id}: the verifier's {REWARD_JSON} is not a map of named rewards") from None
