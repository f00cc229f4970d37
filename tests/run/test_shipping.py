"""A suite folder packed for Ray's workers: its digest names its content (the same files give the
same archive, any change another), what editing tools leave is left out, and a worker unpacks it
once per digest into its cache and reads the benchmark from there, the recipe's key kept."""

import os

from taskfolders import bugfix_suite
from wikiskill.contracts.running import AgentRecipe
from wikiskill.core.config import Config
from wikiskill.run.executors.shipping import SUITES_DIR, pack, suite_folder


def test_the_same_files_pack_to_the_same_digest_and_any_edit_to_another(tmp_path):
    suite = bugfix_suite(tmp_path)
    first = pack("tasks", suite)
    (suite / "__pycache__").mkdir()
    (suite / "__pycache__" / "x.pyc").write_bytes(b"\0")
    os.utime(suite / "suite.yaml", (1, 1))
    assert pack("tasks", suite) == first  # times and tool leftovers do not count
    (suite / "val" / "fix-c" / "task.md").write_text("Fix it, please.")
    assert pack("tasks", suite).digest != first.digest


def test_a_worker_unpacks_an_archive_once_and_reads_the_suite_from_its_own_cache(tmp_path):
    suite = bugfix_suite(tmp_path / "driver")
    config = Config(benchmark=f"tasks:{suite}")
    assert suite_folder(config, None) == ("tasks", suite.resolve())
    archive = pack(*suite_folder(config, None))
    cache = tmp_path / "node-cache"
    folder = archive.unpacked(cache)
    (folder / "marker").write_text("kept")
    assert archive.unpacked(cache) == folder and (folder / "marker").exists()  # not unpacked again
    assert folder == cache / SUITES_DIR / archive.digest and not list((cache / SUITES_DIR).glob(".*"))
    assert (folder / "val" / "fix-c" / "files" / "calc.py").read_text() == (
        suite / "val" / "fix-c" / "files" / "calc.py"
    ).read_text()
    recipe = AgentRecipe(config, ())
    moved = archive.recipe_at(recipe, folder)
    assert moved.key == recipe.key and moved.config.benchmark == f"tasks:{folder}"
    assert suite_folder(Config(benchmark="example-qa"), None) is None
