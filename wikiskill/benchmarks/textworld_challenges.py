"""TextWorld's other challenges beside cooking, as `textworld:<challenge>` suites.

Each is its generation settings and TextWorld's maker. Treasure hunter and coin collector are
generated with `only_last_action`: the objective names the object to take, not the way to it
(TextWorld's default objective spells out every move, which would hand the agent the
walkthrough). The simple game's objective is its brief one.

`offline_playable` is measured (`OfflineAgent`, no skills, 40 steps, 8 train games each): coin
collector 6 of 8 won, mean 0.75; simple none won, mean 0.19 (partial rewards); treasure hunter
none won, 3 lost by taking the wrong object, mean 0. Exploring admissible actions finds a coin or
a food item, but cannot know which object a treasure-hunter objective means.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import textworld
from textworld.challenges.tw_coin_collector import coin_collector
from textworld.challenges.tw_simple import simple
from textworld.challenges.tw_treasure_hunter import treasure_hunter

from wikiskill.benchmarks.base import BenchmarkSpec, Split
from wikiskill.benchmarks.textworld_games import Challenge, Progress, TextWorldGames


class _LevelChallenge:
    """A challenge set by its difficulty level, generated with an objective that names only the last action."""

    settings: dict[str, Any]
    maker: Callable[[dict[str, Any], textworld.GameOptions], textworld.Game]

    def make(self, options: textworld.GameOptions) -> textworld.Game:
        options.grammar.only_last_action = self.settings["only_last_action"]
        return self.maker({"level": self.settings["level"]}, options)


class TreasureHunterChallenge(_LevelChallenge):
    name = "textworld-treasure-hunter"
    textworld_challenge = "tw-treasure_hunter"
    offline_playable = False
    settings: dict[str, Any] = {"level": 15, "only_last_action": True}
    """Level 15 of 30 (medium): 10 rooms, closed doors and containers, a 6-step quest; taking the
    wrong object loses."""
    maker = staticmethod(treasure_hunter.make)


class CoinCollectorChallenge(_LevelChallenge):
    name = "textworld-coin-collector"
    textworld_challenge = "tw-coin_collector"
    offline_playable = True
    settings: dict[str, Any] = {"level": 105, "only_last_action": True}
    """Level 105 of 300: a chain of 5 rooms to the coin, with a dead-end distractor room off each."""
    maker = staticmethod(coin_collector.make)


class SimpleChallenge:
    name = "textworld-simple"
    textworld_challenge = "tw-simple"
    offline_playable = True
    settings: dict[str, Any] = {"rewards": "balanced", "goal": "brief", "test": False}
    """A fixed house: find the food item and put it on the stove; rewarded at the quest's
    milestones; every split from the train food distribution, so splits are identically distributed."""

    def make(self, options: textworld.GameOptions) -> textworld.Game:
        return simple.make(dict(self.settings), options)


CHALLENGES: dict[str, Challenge] = {
    "treasure-hunter": TreasureHunterChallenge(),
    "coin-collector": CoinCollectorChallenge(),
    "simple": SimpleChallenge(),
}
"""Each challenge under the name `textworld:<name>` takes."""


def open_challenge(
    argument: str, spec: BenchmarkSpec, counts: dict[Split, int], progress: Progress | None = None
) -> TextWorldGames:
    return TextWorldGames(CHALLENGES[argument], spec, counts, progress=progress)
