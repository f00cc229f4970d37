"""Harbor task folders are read as they are published: every task.toml field parsed, unknown ones
kept, a broken task folder among good ones listed with its reason and left out (alone: refused
in one line naming the file, nothing written), `harbor.exclude` applied before the split, and the split
(explicit ids, or seeded and stratified by category) in the evaluation fingerprint."""

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs_docker
from harborsuites import harbor_suite, init_harbor, write_harbor_task
from wikiskill.benchmarks.harbor import HarborSuite, read_task
from wikiskill.benchmarks.settings import HarborIds, HarborSettings, SplitSizes
from wikiskill.cli import app
from wikiskill.core.errors import BenchmarkError
from wikiskill.loop.fingerprint import eval_setup
from wikiskill.store.settings import parse_config

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harbor"


def test_a_terminal_bench_2_style_task_parses_every_field_and_keeps_unknown_ones():
    task = read_task(FIXTURES / "tb2-greeting")
    config = task.config
    assert config.version == "1.0" and config.metadata.category == "file-operations"
    assert config.metadata.difficulty == "easy" and config.metadata.tags == ["file-operations", "shell"]
    assert config.agent.timeout_sec == 120.0 and config.verifier.timeout_sec == 60.0
    environment = config.environment
    assert (
        environment.build_timeout_sec,
        environment.cpus,
        environment.memory_mb,
        environment.storage_mb,
        environment.allow_internet,
    ) == (300.0, 1, 512, 1024, False)
    assert config.metadata.author_name == "wikiskill"
    assert config.metadata.model_extra == {"expert_time_estimate_min": 1.0}  # kept, and ignored
    assert task.instruction.startswith("Write the word `hello`") and task.has_dockerfile
    assert task.solve_script is not None


BROKEN = {
    "malformed task.toml": (
        lambda folder: (folder / "task.toml").write_text("[agent\ntimeout_sec = 1\n"),
        "task.toml: not valid TOML",
    ),
    "missing instruction.md": (lambda folder: (folder / "instruction.md").unlink(), "instruction.md is missing"),
    "missing tests/test.sh": (lambda folder: (folder / "tests" / "test.sh").unlink(), "tests/test.sh is missing"),
    "missing Dockerfile": (
        lambda folder: (folder / "environment" / "Dockerfile").unlink(),
        "environment/Dockerfile is missing (or set [environment] docker_image",
    ),
    "task.toml not UTF-8": (
        lambda folder: (folder / "task.toml").write_bytes(b"# na\xefve\n[agent]\ntimeout_sec = 1\n"),
        "task.toml, line 1 (byte offset 4): not UTF-8 text (byte 0xef); it must be saved as UTF-8",
    ),
    "instruction.md not UTF-8": (
        lambda folder: (folder / "instruction.md").write_bytes(b"Write it.\nCaf\xe9.\n"),
        "instruction.md, line 2 (byte offset 13): not UTF-8 text (byte 0xe9)",
    ),
    "non-numeric timeout": (
        lambda folder: (folder / "task.toml").write_text('[agent]\ntimeout_sec = "soon"\n'),
        "task.toml: agent.timeout_sec: Input should be a valid number",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
@needs_docker
def test_a_broken_task_among_good_ones_is_listed_with_its_reason_and_left_out(tmp_path, case):
    suite = harbor_suite(tmp_path)
    break_it, message = BROKEN[case]
    break_it(suite / "rev-dog")
    result = init_harbor(tmp_path / "ws", suite)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    reason = next(line for line in lines if line.strip().startswith("rev-dog: "))
    assert "1 task cannot be read and is left out:" in lines
    assert message in reason and str(suite / "rev-dog") in reason, result.output
    assert "Split: 2 train, 1 val, 0 test tasks." in lines
    assert "rev-dog" not in {task for ids in HarborSuite(suite).split_ids.values() for task in ids}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_lone_broken_task_folder_is_refused_in_one_line_naming_the_file_and_nothing_is_written(tmp_path, case):
    suite = harbor_suite(tmp_path)
    break_it, message = BROKEN[case]
    break_it(suite / "rev-dog")
    result = init_harbor(tmp_path / "ws", suite / "rev-dog")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(suite / "rev-dog") in lines[0], result.output
    assert not (tmp_path / "ws").exists()


def test_a_suite_of_unreadable_tasks_only_is_refused_saying_how_many(tmp_path):
    suite = harbor_suite(tmp_path)
    for task in suite.iterdir():
        (task / "task.toml").write_text("[agent\n")
    with pytest.raises(BenchmarkError, match=r"no task of .* can be read; the first: .*rev-cat/task.toml"):
        HarborSuite(suite)


def test_exclude_leaves_tasks_out_by_id_or_pattern_before_the_split(tmp_path):
    suite = harbor_suite(tmp_path)
    kept = HarborSuite(suite, HarborSettings(exclude=["rev-c*", "rev-owl"]))
    assert sorted(kept.by_id) == ["rev-dog", "rev-emu"] and kept.unreadable == {}
    (suite / "rev-owl" / "task.toml").write_text("[agent\n")
    assert HarborSuite(suite, HarborSettings(exclude=["rev-owl"])).unreadable == {}
    with pytest.raises(BenchmarkError, match="harbor.exclude leaves no task"):
        HarborSuite(suite, HarborSettings(exclude=["*"]))


def test_ids_naming_an_unreadable_task_are_refused_with_its_reason(tmp_path):
    suite = harbor_suite(tmp_path)
    (suite / "rev-owl" / "task.toml").write_text("[agent\n")
    with pytest.raises(BenchmarkError, match="harbor.ids.val: rev-owl cannot be read: .*not valid TOML"):
        HarborSuite(suite, HarborSettings(ids=HarborIds(train=["rev-cat"], val=["rev-owl"])))


def test_a_docker_image_stands_in_for_a_dockerfile(tmp_path):
    folder = write_harbor_task(tmp_path, "prebuilt", "cat", toml='[environment]\ndocker_image = "debian:12"\n')
    (folder / "environment" / "Dockerfile").unlink()
    assert read_task(folder).config.environment.docker_image == "debian:12"


def test_a_seeded_split_is_stratified_by_category_and_of_the_given_sizes(tmp_path):
    suite = tmp_path / "suite"
    for index in range(6):
        write_harbor_task(suite, f"a-{index}", "cat", category="alpha")
        write_harbor_task(suite, f"b-{index}", "dog", category="beta")
    split = HarborSuite(suite, HarborSettings(split_seed=3), SplitSizes(train=4, val=4, test=2))
    for name, size in {"train": 4, "val": 4, "test": 2}.items():
        ids = split.split_ids[name]
        assert len(ids) == size and sum(task_id.startswith("a-") for task_id in ids) == size // 2
    assert (
        HarborSuite(suite, HarborSettings(split_seed=3), SplitSizes(train=4, val=4, test=2)).split_ids
        == split.split_ids
    )
    assert (
        HarborSuite(suite, HarborSettings(split_seed=4), SplitSizes(train=4, val=4, test=2)).split_ids
        != split.split_ids
    )
    defaults = HarborSuite(suite).counts()
    assert defaults == {"train": 6, "val": 3, "test": 3}


def test_explicit_ids_split_the_suite_and_the_split_enters_the_fingerprint(tmp_path):
    suite = harbor_suite(tmp_path)
    config = parse_config(
        yaml.safe_dump(
            {
                "benchmark": f"harbor:{suite}",
                "model": "openai/fake",
                "harbor": {"ids": {"train": ["rev-cat"], "val": ["rev-dog"]}},
            }
        )
    )
    first = HarborSuite(suite, config.harbor, config.splits)
    assert first.counts() == {"train": 1, "val": 1, "test": 0}
    other = config.model_copy(update={"harbor": HarborSettings(ids=HarborIds(train=["rev-cat"], val=["rev-owl"]))})
    second = HarborSuite(suite, other.harbor, other.splits)
    assert eval_setup(config, first, "train").id != eval_setup(other, second, "train").id  # same train ids
    with pytest.raises(Exception, match="harbor.ids.val: no task rev-yak in the suite"):
        HarborSuite(suite, HarborSettings(ids=HarborIds(val=["rev-yak"])))


@needs_docker
def test_init_prints_the_split_counts(tmp_path):
    suite = harbor_suite(tmp_path)
    result = init_harbor(tmp_path / "ws", suite)
    assert result.exit_code == 0, result.output
    assert "Split: 2 train, 1 val, 1 test tasks." in result.output


def test_without_docker_a_harbor_suite_is_refused_naming_the_package(tmp_path, monkeypatch):
    suite = harbor_suite(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    result = init_harbor(tmp_path / "ws", suite)
    assert result.exit_code == 1 and "docker is not installed (apt-get install docker.io)" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "ws").exists()


def test_oracle_and_nop_are_refused_on_a_suite_that_is_not_harbor(tmp_path):
    result = CliRunner().invoke(
        app, ["init", str(tmp_path / "ws"), "--benchmark", "example-qa", "--model", "openai/fake", "--agent", "oracle"]
    )
    assert result.exit_code == 1 and "agent.runner: oracle checks Harbor suites" in result.output
    assert not (tmp_path / "ws").exists()
