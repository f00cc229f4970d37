"""reasoning-gym suites: disjoint seeded splits, the datasets' own scorers, and one evolve round
against the scripted server."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.benchmarks import BenchmarkKind, registry, spec_of
from wikiskill.benchmarks.builtin import ReasoningGymFamily
from wikiskill.benchmarks.reasoning_gym_qa import LIST_NAMES, ReasoningGymQA
from wikiskill.core.errors import BenchmarkError, ConfigError
from wikiskill.testing.fakeserver import FakeOpenAIServer

SPLITS = ("train", "val", "test")
MIXED = ["basic_arithmetic", "leg_counting", "letter_counting"]


def suite(datasets=MIXED, train=4, val=3, test=5) -> ReasoningGymQA:
    return ReasoningGymQA(datasets, ReasoningGymFamily.spec, {"train": train, "val": val, "test": test})


def listing(datasets: list[str], hash_seed: str) -> str:
    """The tasks as another process with another string hash seed makes them."""
    code = (
        "import json, sys\n"
        "from wikiskill.benchmarks.builtin import ReasoningGymFamily\n"
        "from wikiskill.benchmarks.reasoning_gym_qa import ReasoningGymQA\n"
        "bench = ReasoningGymQA(sys.argv[1].split(','), ReasoningGymFamily.spec, "
        "{'train': 4, 'val': 3, 'test': 5})\n"
        "print(json.dumps([[t.id, t.question, t.answer] for s in ('train', 'val', 'test') "
        "for t in bench.tasks(s)]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    return subprocess.run(
        [sys.executable, "-c", code, ",".join(datasets)], env=env, capture_output=True, text=True, check=True
    ).stdout


def test_splits_share_no_question_and_are_dealt_evenly_across_datasets():
    bench = suite()
    tasks = {split: bench.tasks(split) for split in SPLITS}
    assert [len(tasks[s]) for s in SPLITS] == [4, 3, 5]
    questions = [t.question for s in SPLITS for t in tasks[s]]
    assert len(set(questions)) == len(questions)
    assert [t.metadata["dataset"] for t in tasks["test"]] == MIXED + MIXED[:2]  # interleaved, the first take the rest
    assert [t.id for t in tasks["val"]] == [
        "basic_arithmetic-val-000",
        "leg_counting-val-000",
        "letter_counting-val-000",
    ]
    assert all(t.split == s for s in SPLITS for t in tasks[s])


def test_a_small_problem_space_skips_questions_another_split_holds():
    bench = suite(["coin_flip"], train=30, val=30, test=30)
    keys = [t.question for s in SPLITS for t in bench.tasks(s)]
    assert len(set(keys)) == 90
    indices = [t.metadata["index"] for t in bench.tasks("train")]
    assert indices != list(range(30))  # some draws were repeats and were skipped


def test_a_dataset_too_small_for_its_split_is_refused_in_one_line():
    with pytest.raises(BenchmarkError, match=r"gave only \d+ distinct .* questions in \d+ draws"):
        suite(["coin_flip"], train=0, val=0, test=900).tasks("test")


def test_the_same_seed_gives_the_same_tasks_in_another_process():
    here = suite()
    ours = json.dumps([[t.id, t.question, t.answer] for s in SPLITS for t in here.tasks(s)])
    assert listing(MIXED, "1").strip() == ours == listing(MIXED, "2").strip()


def test_tasks_keep_the_entry_the_scorer_needs_and_travel_to_workers():
    task = suite(["arc_1d"]).tasks("val")[0]
    assert task.metadata["entry"]["question"] == task.question and task.metadata["entry"]["answer"] == task.answer
    assert pickle.loads(pickle.dumps(task)) == task
    json.dumps(task.metadata)


@pytest.mark.parametrize("datasets", [MIXED, ["arc_1d", "chain_sum"]])
def test_the_reference_answer_scores_one_and_no_answer_scores_zero(datasets):
    bench = suite(datasets)
    for task in (t for s in SPLITS for t in bench.tasks(s)):
        assert bench.score(task, task.answer) == 1.0, task.id
        assert bench.score(task, None) == 0.0 and bench.score(task, "") == 0.0


HOSTILE_TARGETS = suite(["basic_arithmetic", "arc_1d", "countdown"], train=0, val=3, test=0)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=60)))
def test_any_prediction_scores_between_zero_and_one(prediction):
    for task in HOSTILE_TARGETS.tasks("val"):
        assert 0.0 <= HOSTILE_TARGETS.score(task, prediction) <= 1.0


def test_names_are_checked_in_one_line_each():
    assert (
        registry.canonical_name("reasoning-gym: leg_counting , basic_arithmetic,leg_counting")
        == "reasoning-gym:leg_counting,basic_arithmetic"
    )
    assert spec_of("reasoning-gym:leg_counting").kind is BenchmarkKind.QA
    assert "reasoning-gym-0.1.25" in spec_of("reasoning-gym:leg_counting").version
    with pytest.raises(BenchmarkError, match=f"unknown reasoning-gym dataset .no_such.; .*{re.escape(LIST_NAMES)}"):
        registry.resolve("reasoning-gym:leg_counting,no_such")
    with pytest.raises(BenchmarkError, match="hash seed"):
        registry.resolve("reasoning-gym:word_ladder")
    with pytest.raises(BenchmarkError, match="name them instead"):
        registry.resolve("reasoning-gym:composite")
    with pytest.raises(BenchmarkError, match="needs an argument"):
        registry.resolve("reasoning-gym")


class Solver(ScriptedWorld):
    """The scripted world, answering with each task's reference answer, except that it miscounts
    legs until its prompt carries the SPELL marker (round 1's proposed skill)."""

    def __init__(self, answers: dict[str, str], train_ids: list[str]):
        super().__init__(trace_ids=train_ids)
        self.answers = answers

    def answer(self, system: str, question: str) -> str:
        answer = self.answers[question]
        if "legs" in question and SPELL not in system:
            answer = str(int(answer) + 1)
        return f"<answer>{answer}</answer>"


def test_init_evolve_and_eval_against_the_scripted_server(tmp_path):
    name = "reasoning-gym:basic_arithmetic,leg_counting"
    bench = suite(["basic_arithmetic", "leg_counting"], train=4, val=2, test=2)
    answers = {t.question: t.answer for s in SPLITS for t in bench.tasks(s)}
    with FakeOpenAIServer(Solver(answers, [t.id for t in bench.tasks("train")])) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark=name, model="openai/fake", api_base=server.base_url, train=4, val=2, test=2
        )
        evolved = api.evolve(ws, 1)
        result = api.evaluate(ws, "test")
    assert evolved.rounds_completed == 1 and evolved.decisions == ["accepted"] and evolved.incumbent == 1.0
    assert result.evaluation.mean == 1.0 and len(result.evaluation.scores) == 2  # the accepted skill counts legs
    assert result.setup.benchmark == name and result.setup.benchmark_version == ReasoningGymFamily.spec.version


def test_the_offline_model_is_refused_for_reasoning_gym(tmp_path):
    with pytest.raises(ConfigError, match="offline model cannot play reasoning-gym"):
        api.init_workspace(tmp_path / "ws", benchmark="reasoning-gym:leg_counting")
