"""What `check-suite` and `eval` say about a Harbor suite whose machinery, not its tasks, fails:
an unreadable task among good ones is listed with its reason, a broken build's log path is
printed whole under the table however narrow the terminal, a Dockerfile FROM a base image the
engine lacks names `wikiskill base-image`, and an eval whose every task is infra says that no
task was scored instead of a mean of 0."""

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs_docker
from harborsuites import IDS, containers_of, harbor_suite, init_harbor, remove_images, tag_of, write_harbor_task
from wikiskill.cli import app


@pytest.fixture()
def suite(tmp_path):
    suite = harbor_suite(tmp_path)
    yield suite
    remove_images([tag_of(suite / "rev-cat")])


@needs_docker
def test_check_suite_lists_an_unreadable_task_and_prints_a_broken_builds_log_path_whole(tmp_path, suite):
    (suite / "rev-emu" / "task.toml").write_text("[agent\ntimeout_sec = 1\n")
    deep = "a-task-with-a-long-name-" + "x" * 60
    broken = write_harbor_task(suite, deep, "yak", dockerfile="FROM wikiskill/base:bookworm\nRUN exit 3\n")
    try:
        result = CliRunner().invoke(app, ["check-suite", str(suite)], env={"COLUMNS": "60"})
    finally:
        remove_images([tag_of(broken)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    emu = next(line for line in lines if line.startswith("rev-emu: "))
    assert f"{suite / 'rev-emu' / 'task.toml'}: not valid TOML" in emu
    build = next(line for line in lines if line.startswith(f"{deep}: "))
    log = Path(build.split("its log: ")[1])
    assert log.is_file() and "exit 3" in log.read_text()
    assert "3 of 5 tasks sound." in lines
    assert containers_of(suite) == []


@needs_docker
def test_a_build_from_a_missing_base_image_names_wikiskill_base_image(tmp_path):
    task = write_harbor_task(
        tmp_path / "suite", "rev-cat", "cat", dockerfile="FROM wikiskill/base:no-such-release\nRUN true\n"
    )
    result = CliRunner().invoke(app, ["check-suite", str(task)])
    assert result.exit_code == 1
    reason = next(line for line in result.output.splitlines() if line.startswith("rev-cat: "))
    assert "failed to build" in reason
    assert "FROM wikiskill/base:no-such-release, which this engine lacks: make it with `wikiskill base-image`" in reason


@needs_docker
def test_eval_whose_every_task_is_infra_says_no_task_was_scored_not_a_mean_of_zero(tmp_path, suite):
    for task_id in IDS["val"]:
        (suite / task_id / "tests" / "test.sh").write_text(
            '#!/bin/bash\nmkdir -p /logs/verifier\necho \'{"passed": 0, "total": 3}\' > /logs/verifier/reward.json\n'
        )
    ws = tmp_path / "ws"
    assert init_harbor(ws, suite).exit_code == 0
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config["harbor"] = {"ids": IDS}
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(app, ["-C", str(ws), "eval", "--split", "val", "--agent", "nop"])
    assert result.exit_code == 1, result.output
    assert "mean score" not in result.output
    assert "no task was scored: all 2 failed as infra (above)" in result.output
    assert "several keys (passed, total)" in result.output
    assert containers_of(ws) == []
