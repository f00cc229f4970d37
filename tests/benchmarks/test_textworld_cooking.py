"""textworld-cooking on real generated games (2 train + 1 val, generated once per session)."""

import json
import os
import re
from itertools import combinations

import pytest

from wikiskill.benchmarks.base import EnvStep, normalized_score
from wikiskill.benchmarks.textworld_cooking import (
    SEED_RANGE,
    TextWorldCooking,
    TextWorldEnv,
    clean_observation,
    games_dir,
    single_command,
    walkthrough,
)

pytestmark = pytest.mark.slow

STATUS_FRAGMENT = re.compile(r"=-\s*-?\d+/\d+|^>|RESTART, RESTORE|\$\$", re.MULTILINE)


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    """Generate the games into a private cache, after planting what a killed run leaves behind.
    The cache is private only while they are made: later modules on this worker use the shared one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WIKISKILL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        directory = games_dir()
        directory.mkdir(parents=True)
        (directory / "seed-1001.json").write_text('{"half": ')  # killed between the two moves
        (directory / ".tmp-killed").mkdir()
        (directory / ".tmp-killed" / "seed-1000.z8").write_bytes(b"half a story")

        calls = []
        bench = TextWorldCooking(n_train=2, n_val=1, n_test=0, progress=lambda *args: calls.append(args))
        tasks = {"train": bench.tasks("train"), "val": bench.tasks("val")}
    yield bench, tasks, calls, directory


@pytest.fixture
def train_tasks(generated):
    return generated[1]["train"]


def play(task, commands):
    env = TextWorldCooking().make_env(task)
    try:
        return [env.reset()] + [env.step(command) for command in commands]
    finally:
        env.close()


def test_seed_ranges_are_disjoint():
    bench = TextWorldCooking()
    seeds = {split: set(bench.seeds(split)) for split in ("train", "val", "test")}
    assert [len(s) for s in seeds.values()] == [39, 18, 134]
    assert all(not a & b for a, b in combinations(seeds.values(), 2))
    full = TextWorldCooking(SEED_RANGE, SEED_RANGE, SEED_RANGE)
    assert len({s for split in ("train", "val", "test") for s in full.seeds(split)}) == 3 * SEED_RANGE
    with pytest.raises(ValueError):
        TextWorldCooking(n_train=SEED_RANGE + 1)


def test_ids_seeds_and_metadata_are_deterministic(generated):
    _, tasks, _, directory = generated
    assert [t.id for t in tasks["train"]] == ["tw-train-000", "tw-train-001"]
    assert [t.id for t in tasks["val"]] == ["tw-val-000"]
    assert [t.metadata["seed"] for t in tasks["train"] + tasks["val"]] == [1000, 1001, 2000]
    for task in tasks["train"] + tasks["val"]:
        assert task.metadata["game_file"] == str(directory / f"seed-{task.metadata['seed']}.z8")
        assert task.answer is None and task.question


def test_generation_is_lazy_per_split_and_leaves_no_partial_games(generated):
    _, _, calls, directory = generated
    assert sorted(p.name for p in directory.glob("seed-*")) == [
        f"seed-{seed}.{ext}" for seed in (1000, 1001, 2000) for ext in ("json", "z8")
    ]  # no test game
    assert calls == [(0, 2), (1, 2), (2, 2), (0, 1), (1, 1)]  # each bar shows from its start
    assert "walkthrough" in json.loads((directory / "seed-1001.json").read_text())["metadata"]


def test_evolve_prepares_train_and_val_in_one_batch_of_57_games(tmp_path, monkeypatch):
    from wikiskill.benchmarks import textworld_games

    batches = []
    monkeypatch.setenv("WIKISKILL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(
        textworld_games, "_generate_all", lambda challenge, seeds, directory, progress: batches.append(seeds)
    )
    TextWorldCooking().prepare(("val", "train"))
    assert [len(batch) for batch in batches] == [57] and len(set(batches[0])) == 57


def test_second_tasks_call_generates_nothing(generated):
    bench, tasks, _, directory = generated
    mtimes = {p.name: p.stat().st_mtime_ns for p in directory.glob("seed-*")}
    calls = []
    again = TextWorldCooking(n_train=2, n_val=1, n_test=0, progress=lambda *args: calls.append(args))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WIKISKILL_CACHE_DIR", str(directory.parents[1]))
        assert again.tasks("train") == tasks["train"] and again.tasks("val") == tasks["val"]
    assert calls == []
    assert {p.name: p.stat().st_mtime_ns for p in directory.glob("seed-*")} == mtimes


def test_walkthrough_wins_with_a_cumulative_score(train_tasks):
    for task in train_tasks:
        steps = play(task, walkthrough(task))
        scores = [step.score for step in steps]
        assert scores == sorted(scores) and scores[0] == 0
        final = steps[-1]
        assert final.done and final.won and not final.lost
        assert final.score == final.max_score > 0 and normalized_score(final) == 1.0
        assert not any(step.done for step in steps[:-1])


def test_burning_an_ingredient_loses(train_tasks):
    task = train_tasks[0]
    commands = walkthrough(task)
    cook = next(i for i, command in enumerate(commands) if command.startswith("cook "))
    steps = play(task, commands[: cook + 1] + [commands[cook], "look"])
    burned, after = steps[-2], steps[-1]
    assert "burned" in burned.observation
    assert burned.done and burned.lost and not burned.won
    assert 0 < normalized_score(burned) < 1
    assert after == burned  # stepping a finished game changes nothing


def test_invalid_actions_get_the_games_reply(train_tasks):
    start, nonsense, empty, chained = play(train_tasks[0], ["xyzzy plugh", "", "look. inventory"])
    assert "recognise" in nonsense.observation
    assert "pardon" in empty.observation
    assert "carrying" not in chained.observation and "-=" in chained.observation  # only `look` ran
    for step in (nonsense, empty, chained):
        assert not step.done and step.score == 0
        assert step.admissible_actions == start.admissible_actions


def test_objective_does_not_reveal_the_walkthrough(generated):
    _, tasks, _, _ = generated
    for task in tasks["train"] + tasks["val"]:
        question = task.question.lower()
        assert "cookbook" in question
        assert not [command for command in walkthrough(task) if command.lower() in question]


def test_observations_have_no_status_line(train_tasks):
    steps = play(train_tasks[1], ["xyzzy"] + walkthrough(train_tasks[1]))
    assert steps[0].observation.startswith(train_tasks[1].question)
    for step in steps:
        assert step.observation and not STATUS_FRAGMENT.search(step.observation), step.observation
        assert step.admissible_actions == sorted(step.admissible_actions)
    assert "*** The End ***" in steps[-1].observation


def test_clean_observation_strips_prompt_status_and_restart_menu():
    raw = (
        "\nYou burned the carrot!\n\n\n\n          *** You lost! ***\n\nYou scored 3 out of a possible 8, in 10 turns."
        "\n\n\nWould you like to RESTART, RESTORE a saved game, QUIT or UNDO the last command?\n>"
        "                                    -= Kitchen =-3/10"
    )
    assert clean_observation(raw) == (
        "You burned the carrot!\n\n*** You lost! ***\n\nYou scored 3 out of a possible 8, in 10 turns."
    )
    assert clean_observation("\n\n-= Kitchen =-\nA kitchen.\n\n>      -= Kitchen =-0/1") == "-= Kitchen =-\nA kitchen."


def test_single_command_keeps_the_first_command_on_one_line():
    assert single_command("  take   red apple\nlook") == "take red apple"
    assert single_command("go north. go south") == "go north"
    assert single_command("open fridge then take milk") == "open fridge"
    assert single_command("take apple, banana") == "take apple, banana"


def test_normalized_score_is_the_game_score_over_its_maximum_clipped_to_0_1():
    assert normalized_score(EnvStep("", score=3, max_score=8)) == 3 / 8
    assert normalized_score(EnvStep("", score=9, max_score=8)) == 1.0
    assert normalized_score(EnvStep("", score=-1, max_score=8)) == 0.0
    assert normalized_score(EnvStep("", score=0, max_score=0, won=True)) == 1.0
    assert normalized_score(EnvStep("", score=0, max_score=0)) == 0.0


def test_step_before_reset_is_an_error(train_tasks):
    env = TextWorldEnv(train_tasks[0].metadata["game_file"])
    with pytest.raises(RuntimeError):
        env.step("look")
    env.close()
    assert os.path.isfile(env.game_file)
