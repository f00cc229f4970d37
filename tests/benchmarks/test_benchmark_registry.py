"""The benchmark registry: built-in families and a third-party suite installed as an entry point."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wikiskill import api
from wikiskill.benchmarks import BenchmarkKind, is_known, known_benchmarks, registry, spec_of
from wikiskill.core.errors import BenchmarkError, ConfigError
from wikiskill.store.settings import parse_config
from wikiskill.testing.fakeserver import FakeOpenAIServer

PLUGIN = '''
"""A third-party suite: 'What is A plus B?' with the sum as the answer, generated from a seed."""
from wikiskill.benchmarks import BenchmarkKind, BenchmarkSpec, SplitCounts, Task


class Sums:
    name = "sums"

    def __init__(self, spec, counts):
        self.spec = spec
        self.counts = counts

    def tasks(self, split):
        offset = {"train": 0, "val": 100, "test": 200}[split]
        return [Task(id=f"{split}-{i}", split=split, question=f"What is {offset + i} plus {i}?",
                     answer=str(offset + 2 * i)) for i in range(self.counts[split])]

    def prepare(self, splits):
        pass

    def score(self, task, prediction):
        return float((prediction or "").strip() == task.answer)


class SumsFamily:
    spec = BenchmarkSpec(family="sums", kind=BenchmarkKind.QA, summary="sums of two numbers",
                         default_splits=SplitCounts(train=3, val=4, test=2), max_steps=5, version="7")

    def check(self, argument, base=None):
        return argument

    def load(self, argument, request):
        return Sums(self.spec, request.split_counts(self.spec))
'''


def install_plugin(site: Path, body: str = PLUGIN, target: str = "acme_sums:SumsFamily") -> Path:
    """What `pip install` leaves for a package with a `wikiskill.benchmarks` entry point."""
    (site / "acme_sums").mkdir(parents=True)
    (site / "acme_sums" / "__init__.py").write_text(body)
    meta = site / "acme_sums-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-sums\nVersion: 1.0\n")
    (meta / "entry_points.txt").write_text(f"[wikiskill.benchmarks]\nsums = {target}\n")
    return site


@pytest.fixture
def fresh_registry():
    """Each test sees the entry points installed for it, and imports its own plugin module."""

    def forget():
        registry.family.cache_clear()
        sys.modules.pop("acme_sums", None)

    forget()
    yield
    forget()


@pytest.fixture
def plugin_site(tmp_path, monkeypatch, fresh_registry) -> Path:
    site = install_plugin(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    return site


def sums_answerer(body: dict) -> str:
    question = body["messages"][-1]["content"]
    a, b = (int(n) for n in re.search(r"What is (\d+) plus (\d+)", question).groups())
    return f"<answer>{a + b}</answer>"


def test_the_built_in_families_are_found_in_their_registry(fresh_registry):
    assert {"textworld-cooking", "example-qa", "jsonl:DIR"} <= set(known_benchmarks())
    assert spec_of("textworld-cooking").kind is BenchmarkKind.INTERACTIVE
    assert spec_of("jsonl:/anywhere").kind is BenchmarkKind.QA
    assert is_known("example-qa") and not is_known("jsonl") and not is_known("example-qa:extra")


def test_an_installed_plugin_is_listed_and_its_suite_is_evaluated(plugin_site, tmp_path, monkeypatch):
    assert "sums" in known_benchmarks()
    monkeypatch.chdir(tmp_path)
    with FakeOpenAIServer(sums_answerer) as server:
        ws = api.init_workspace(tmp_path / "ws", benchmark="sums", model="openai/fake", api_base=server.base_url)
        config = (ws.root / "wikiskill.yaml").read_text()
        assert "train: 3" in config and "val: 4" in config and "max_steps: 5" in config
        result = api.evaluate(ws, "val")
    assert result.evaluation.mean == 1.0
    assert len(result.evaluation.scores) == 4
    assert result.setup.benchmark_version == "7"


def test_the_benchmarks_command_lists_a_plugin_from_another_process(tmp_path, fresh_registry):
    site = install_plugin(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": str(site), "COLUMNS": "200"}
    listing = subprocess.run(
        [sys.executable, "-m", "wikiskill", "benchmarks"], env=env, capture_output=True, text=True, check=True
    ).stdout
    row = next(line for line in listing.splitlines() if line.startswith("sums "))
    assert "qa, train/val/test 3/4/2, needs an LLM" in row and row.rstrip().endswith("ready")
    assert "    sums of two numbers" in listing


def test_a_broken_plugin_is_named_in_one_line_and_breaks_only_its_own_name(tmp_path, monkeypatch, fresh_registry):
    site = install_plugin(tmp_path / "site", body="raise ImportError('no module named acme_core')\n")
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(BenchmarkError, match=r"plugin 'sums' \(acme_sums:SumsFamily\) cannot be loaded: ImportError"):
        registry.resolve("sums")
    assert is_known("example-qa")
    broken = next(row for row in registry.list_families() if row.name == "sums")
    assert broken.spec is None and "acme_core" in broken.error


def test_a_plugin_that_is_not_a_family_is_refused(tmp_path, monkeypatch, fresh_registry):
    site = install_plugin(tmp_path / "site", body="class NotAFamily:\n    pass\n", target="acme_sums:NotAFamily")
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(BenchmarkError, match="is not a benchmark family"):
        registry.resolve("sums")


def test_a_suite_whose_requirements_are_missing_says_what_to_install(tmp_path, monkeypatch, fresh_registry):
    needy = PLUGIN.replace(
        'version="7")',
        'version="7", requires=("acme_missing_engine",),\n                         needs="pip install acme-engine")',
    )
    site = install_plugin(tmp_path / "site", body=needy)
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(BenchmarkError, match=r"needs pip install acme-engine \(missing: acme_missing_engine\)"):
        api.init_workspace(tmp_path / "ws", benchmark="sums", model="openai/fake")
    assert not (tmp_path / "ws").exists()
    row = next(row for row in registry.list_families() if row.name == "sums")
    assert not row.ready and row.missing == ("acme_missing_engine",)


def test_arguments_are_checked_against_the_family(fresh_registry):
    with pytest.raises(BenchmarkError, match="takes no argument"):
        registry.resolve("textworld-cooking:hard")
    with pytest.raises(BenchmarkError, match="needs an argument: jsonl:DIR"):
        registry.resolve("jsonl")
    with pytest.raises(BenchmarkError, match="nothing after the ':'"):
        registry.resolve("jsonl:")


def test_a_relative_jsonl_folder_is_written_absolute_by_init(tmp_path, monkeypatch, fresh_registry):
    data = Path(__file__).resolve().parents[2] / "benchmarks" / "example-qa"
    monkeypatch.chdir(data.parent)
    ws = api.init_workspace(tmp_path / "ws", benchmark="jsonl:example-qa", model="openai/fake")
    assert f'benchmark: "jsonl:{data}"' in (ws.root / "wikiskill.yaml").read_text()


def test_the_offline_model_is_refused_for_a_suite_it_cannot_play(plugin_site, tmp_path):
    with pytest.raises(ConfigError, match="offline model cannot play sums"):
        api.init_workspace(tmp_path / "ws", benchmark="sums")


def test_a_config_naming_a_suite_whose_package_is_missing_is_still_read(tmp_path, monkeypatch, fresh_registry):
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # what an install without the extra has
    monkeypatch.delitem(sys.modules, "wikiskill.benchmarks.reasoning_gym_qa", raising=False)
    config = parse_config("benchmark: reasoning-gym:basic_arithmetic\nmodel: openai/x\n")
    assert config.benchmark == "reasoning-gym:basic_arithmetic"
    with pytest.raises(BenchmarkError, match="needs pip install 'wikiskill\\[reasoning-gym\\]'"):
        registry.resolve(config.benchmark)
