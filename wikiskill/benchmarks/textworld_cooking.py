"""The built-in `textworld-cooking` benchmark: TextWorld's `tw-cooking` challenge (the First
TextWorld Problems recipe games), generated and played through `textworld_games`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import textworld
from textworld.challenges.tw_cooking import cooking

from wikiskill.benchmarks import textworld_games
from wikiskill.benchmarks.specs import TEXTWORLD_COOKING, TEXTWORLD_COOKING_SPLITS
from wikiskill.benchmarks.textworld_games import (
    GENERATION_WORKERS,
    SEED_BASES,
    SEED_RANGE,
    Progress,
    TextWorldEnv,
    TextWorldGames,
    clean_observation,
    single_command,
    walkthrough,
)

__all__ = [
    "GENERATION_SETTINGS",
    "GENERATION_WORKERS",
    "SEED_BASES",
    "SEED_RANGE",
    "CookingChallenge",
    "TextWorldCooking",
    "TextWorldEnv",
    "clean_observation",
    "ensure_games",
    "games_dir",
    "single_command",
    "walkthrough",
]

GENERATION_SETTINGS: dict[str, Any] = {
    "recipe": 2,  # ingredients in the recipe
    "take": 2,  # ...all of which must be found (none start in the inventory)
    "go": 6,  # rooms (tw-cooking allows 1, 6, 9 or 12)
    "open": True,  # doors and containers start closed
    "cook": True,  # ingredients start raw: roast (oven), fry (stove) or grill (BBQ); cooking twice burns
    "cut": True,  # ingredients start uncut: slice, dice or chop with the knife
    "drop": False,  # unlimited inventory; tw-cooking does not record a walkthrough with `drop`
    "recipe_seed": 0,  # the recipe follows from the game seed
    "split": None,  # one food distribution for all our splits, so they are identically distributed
}
"""`tw-cooking` settings: a small game (14-20 walkthrough steps) that can be lost.

Losing ends the game: burning an ingredient (cooking it twice), cooking or cutting it the wrong
way, or eating an ingredient instead of the prepared meal.
"""


class CookingChallenge:
    name = "textworld-cooking"
    textworld_challenge = "tw-cooking"
    settings = GENERATION_SETTINGS
    offline_playable = True

    def make(self, options: textworld.GameOptions) -> textworld.Game:
        return cooking.make(dict(self.settings), options)


COOKING = CookingChallenge()


def games_dir() -> Path:
    return textworld_games.games_dir(COOKING)


def ensure_games(seeds: Sequence[int], progress: Progress | None = None) -> list[Path]:
    """The cooking game file of each seed, generating the missing ones in parallel first."""
    return textworld_games.ensure_games(COOKING, seeds, progress)


class TextWorldCooking(TextWorldGames):
    """TextWorld cooking games; games of a split are generated (once) on its first `tasks` call."""

    def __init__(
        self,
        n_train: int = TEXTWORLD_COOKING_SPLITS.train,
        n_val: int = TEXTWORLD_COOKING_SPLITS.val,
        n_test: int = TEXTWORLD_COOKING_SPLITS.test,
        *,
        progress: Progress | None = None,
    ):
        super().__init__(
            COOKING, TEXTWORLD_COOKING, {"train": n_train, "val": n_val, "test": n_test}, progress=progress
        )
