"""benchmarks/harbor-example is a Harbor-format suite as published: every task folder holds what
Harbor reads, and with the plain docker CLI each task's image builds, an untouched container scores
0 and solution/solve.sh scores 1, its tests copied in only after the agent's part."""

from __future__ import annotations

import os
import re
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import needs_docker
from harbor_docker import DockerRun
from wikiskill.core.resources import data_dir

SUITE = data_dir("benchmarks") / "harbor-example"
TASKS = sorted(path for path in SUITE.iterdir() if path.is_dir())


def test_every_example_task_folder_holds_what_harbor_reads():
    assert len(TASKS) == 20
    for task in TASKS:
        config = tomllib.loads((task / "task.toml").read_text())
        assert {"category", "difficulty"} <= set(config["metadata"]), task
        assert config["agent"]["timeout_sec"] > 0 and config["verifier"]["timeout_sec"] > 0, task
        assert config["environment"]["allow_internet"] is False, task
        assert {"cpus", "memory_mb", "storage_mb", "build_timeout_sec"} <= set(config["environment"]), task
        assert (task / "instruction.md").read_text().strip(), task
        dockerfile = (task / "environment" / "Dockerfile").read_text()
        assert re.match(r"FROM wikiskill/base:bookworm\nWORKDIR /app\n", dockerfile), task
        for script in (task / "tests" / "test.sh", task / "solution" / "solve.sh"):
            assert os.access(script, os.X_OK), script


def test_example_categories_are_balanced_for_a_stratified_split():
    categories = Counter(tomllib.loads((task / "task.toml").read_text())["metadata"]["category"] for task in TASKS)
    assert set(categories) == {"terminal", "data", "python", "config"}
    assert set(categories.values()) == {5}


@needs_docker
def test_each_example_task_scores_zero_untouched_and_one_after_its_solution():
    run = DockerRun()
    try:

        def both(task: Path):
            image = run.build(task)
            return task.name, run.trial(task, image, solve=False), run.trial(task, image, solve=True)

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(both, TASKS))
    finally:
        run.close()
    scores = {name: (nop.reward, oracle.reward) for name, nop, oracle in results}
    assert {name: pair for name, pair in scores.items() if pair != (0.0, 1.0)} == {}, {
        name: (nop.verifier_output, oracle.verifier_output)
        for name, nop, oracle in results
        if scores[name] != (0.0, 1.0)
    }
    assert not any(nop.tests_seen_before_verifier or oracle.tests_seen_before_verifier for _, nop, oracle in results)
