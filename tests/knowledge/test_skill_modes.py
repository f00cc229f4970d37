"""benchmarks/perf/skill_modes.py: its synthetic skills and labelled tasks are sound, and the
measurement it prints behaves as the modes promise."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from wikiskill.knowledge.skills import skill_problems

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "perf" / "skill_modes.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("skill_modes_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_synthetic_skills_are_distinct_valid_and_mixed(bench):
    specs = bench.ordered_specs()
    assert len(specs) == 100 and len({s.name for s in specs}) == 100 and len({s.description for s in specs}) == 100
    for index, spec in enumerate(specs):
        assert skill_problems(bench.skill_text(spec, index), spec.name) == []
    first_five = {bench.SPECS.index(spec) // 5 for spec in specs[:5]}
    assert len(first_five) == 5  # the small workspace spans five topics, not one


def test_labelled_tasks_do_not_give_the_skill_name_away(bench):
    tasks = [(spec.task.lower(), spec.name) for spec in bench.SPECS]
    assert len(tasks) >= 60 and len({task for task, _ in tasks}) == len(tasks)
    for task, name in tasks:
        assert name not in task and name.replace("-", " ") not in task


def test_measurement_follows_the_modes(bench):
    count = lambda text: len(text) // 4  # noqa: E731
    small, large = bench.measure(5, count), bench.measure(30, count)
    assert small.index < small.full and large.index < large.full
    assert large.full > 4 * small.full  # full grows with every skill
    assert large.retrieve_max < large.index  # retrieve stays at top-k however many skills exist
    assert small.tasks == 5 and large.tasks == 30
    for row in (small, large):
        assert 0 <= row.recall[1] <= row.recall[3] <= row.recall[5] <= 1
    assert large.recall[3] >= 0.5  # BM25 finds most needed skills among 30


def test_the_script_prints_a_table(bench):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "5", "30"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("System prompt of the interactive task agent, in ")
    header = next(line for line in lines if line.split()[:1] == ["skills"])
    assert header.split() == ["skills", "full", "index", "+tool", "retrieve", "R@1", "R@3", "R@5", "tasks"]
    rows = [line.split() for line in lines if line.split()[:1] in (["5"], ["30"])]
    assert [row[0] for row in rows] == ["5", "30"] and [row[-1] for row in rows] == ["5", "30"]
