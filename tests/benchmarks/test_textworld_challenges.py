"""textworld:<challenge> on real generated games (a handful, generated once per session): each
challenge's walkthrough wins, doing nothing scores nothing, and one evolve round runs against the
scripted server."""

from __future__ import annotations

import re

import pytest

from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.benchmarks import HasReferenceActions, normalized_score, registry, spec_of
from wikiskill.benchmarks.builtin import TextWorldFamily
from wikiskill.benchmarks.textworld_challenges import CHALLENGES, open_challenge
from wikiskill.benchmarks.textworld_cooking import COOKING
from wikiskill.benchmarks.textworld_games import games_dir
from wikiskill.core.errors import BenchmarkError, ConfigError
from wikiskill.core.resources import cache_root
from wikiskill.store.settings import load_config
from wikiskill.testing.fakeserver import FakeOpenAIServer

pytestmark = pytest.mark.slow

E2E_COUNTS = {"train": 4, "val": 1, "test": 1}  # the scripted proposer reads 4 train traces


def suite(challenge: str, counts=None):
    return open_challenge(challenge, TextWorldFamily().spec_for(challenge), counts or {"train": 1, "val": 0, "test": 0})


def play(bench, task, commands):
    env = bench.make_env(task)
    try:
        return [env.reset()] + [env.step(command) for command in commands]
    finally:
        env.close()


@pytest.mark.parametrize("challenge", sorted(CHALLENGES))
def test_the_walkthrough_wins_and_looking_around_scores_nothing(challenge):
    bench = suite(challenge)
    task = bench.tasks("train")[0]
    assert isinstance(bench, HasReferenceActions)
    moves = bench.reference_actions(task)
    won = play(bench, task, moves)[-1]
    assert won.done and won.won and normalized_score(won) == 1.0
    idle = play(bench, task, ["look"] * 8)
    assert not any(step.done for step in idle) and normalized_score(idle[-1]) == 0.0
    assert all(move.lower() not in task.question.lower() for move in moves if move.startswith("go "))


def test_each_challenge_has_its_own_cache_folder_and_cookings_is_unchanged():
    folders = {games_dir(challenge) for challenge in [COOKING, *CHALLENGES.values()]}
    assert len(folders) == 4 and all(folder.parent.parent == cache_root() for folder in folders)
    assert games_dir(COOKING) == cache_root() / "textworld-cooking" / "7cc1c217c0bf3449"  # existing caches stay valid


def test_challenge_names_are_checked_and_textworlds_own_names_are_taken():
    assert registry.canonical_name("textworld:tw-treasure_hunter") == "textworld:treasure-hunter"
    assert registry.canonical_name("textworld:Coin_Collector") == "textworld:coin-collector"
    with pytest.raises(BenchmarkError, match="is the benchmark `textworld-cooking`"):
        registry.resolve("textworld:tw-cooking")
    with pytest.raises(
        BenchmarkError, match="unknown TextWorld challenge 'maze'; choose one of: textworld:treasure-hunter"
    ):
        registry.resolve("textworld:maze")
    with pytest.raises(BenchmarkError, match=r"needs an argument: textworld:<challenge>"):
        registry.resolve("textworld")


def test_the_offline_model_is_refused_only_where_it_cannot_play(tmp_path):
    assert [
        spec_of(f"textworld:{name}").offline_playable for name in ("treasure-hunter", "coin-collector", "simple")
    ] == [False, True, True]
    with pytest.raises(ConfigError, match="offline model cannot play textworld:treasure-hunter"):
        api.init_workspace(tmp_path / "hunter", benchmark="textworld:treasure-hunter")
    ws = api.init_workspace(tmp_path / "coins", benchmark="textworld:coin-collector", train=2, val=1, test=1)
    assert 'benchmark: "textworld:coin-collector"' in (ws.root / "wikiskill.yaml").read_text()


class Walker(ScriptedWorld):
    """Plays each game's walkthrough once its prompt carries the SPELL marker (round 1's skill);
    before that it only looks around. Episodes run one at a time: the agent shows the goal on an
    episode's first turn only, so the game is remembered from it."""

    def __init__(self, walkthroughs: dict[str, list[str]], train_ids: list[str]):
        super().__init__(trace_ids=train_ids)
        self.walkthroughs = walkthroughs
        self.moves: list[str] = []

    def __call__(self, body: dict):
        messages = body["messages"]
        if not messages[0]["content"].startswith("You are an agent playing a text-based game"):
            return super().__call__(body)
        goal = re.search(r"^Goal: (.*)$", messages[-1]["content"], re.MULTILINE)
        if goal is not None:
            self.moves = self.walkthroughs[goal.group(1).strip()] if SPELL in messages[0]["content"] else []
        turn = int(re.search(r"Step (\d+) of", messages[-1]["content"]).group(1)) - 1
        return f"<action>{self.moves[turn] if turn < len(self.moves) else 'look'}</action>"


def test_init_evolve_and_eval_against_the_scripted_server(tmp_path):
    bench = suite("coin-collector", E2E_COUNTS)
    tasks = [task for split in E2E_COUNTS for task in bench.tasks(split)]
    walkthroughs = {task.question: bench.reference_actions(task) for task in tasks}
    assert len(walkthroughs) == len(tasks)  # each game is told apart by its objective
    with FakeOpenAIServer(Walker(walkthroughs, [t.id for t in bench.tasks("train")])) as server:
        ws = api.init_workspace(
            tmp_path / "ws",
            benchmark="textworld:coin-collector",
            model="openai/fake",
            api_base=server.base_url,
            concurrency=1,
            **E2E_COUNTS,
        )
        config = ws.root / "wikiskill.yaml"  # short episodes keep the proposer's reads within its context
        config.write_text(config.read_text().replace("max_steps: 40", "max_steps: 8"))
        assert load_config(ws.root).agent.max_steps == 8
        evolved = api.evolve(ws, 1)
        result = api.evaluate(ws, "test")
    assert evolved.rounds_completed == 1 and evolved.decisions == ["accepted"] and evolved.incumbent == 1.0
    assert result.evaluation.mean == 1.0 and result.setup.benchmark == "textworld:coin-collector"
