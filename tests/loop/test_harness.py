"""The harness of one command: `Harness.open` loads what its contexts hold (the settings, the
suite, the roles); the constructor composes what it is handed and reads nothing. Its Reader
holds the workspace's read side only."""

from wikiskill.loop.harness import Harness, QuietReporter
from wikiskill.store.trailers import Trailers
from wikiskill.store.workspace import MAIN
from workspaces import new_workspace


def test_opening_a_harness_loads_the_suite_its_workspaces_settings_name(tmp_path):
    ws = new_workspace(tmp_path)
    with Harness.open(ws) as harness:
        assert harness.config.benchmark == "example-qa"
        assert harness.reading.benchmark is harness.benchmark and harness.benchmark.tasks("val")


def test_a_harness_composed_from_a_loaded_suite_reads_nothing_of_its_workspace(tmp_path):
    ws = new_workspace(tmp_path)
    opened = Harness.open(ws)
    (ws.root / "wikiskill.yaml").unlink()
    composed = Harness(ws, opened.config, opened.benchmark, opened.evaluating.team, QuietReporter())
    assert composed.benchmark.tasks("val") == opened.benchmark.tasks("val")
    assert composed.evaluating.team is opened.evaluating.team


def test_a_harness_reader_holds_only_the_read_side_of_its_workspace_and_reads_its_new_commits(tmp_path):
    ws = new_workspace(tmp_path)
    with Harness.open(ws) as harness:
        reads = harness.reading.ws
        assert not any(hasattr(reads, write) for write in ("commit", "tag", "move_branch", "writing"))
        before = reads.log(MAIN)
        sha = harness.publishing.commit("a note on main", Trailers(), {"notes.md": "note\n"})
        assert [commit.sha for commit in reads.log(MAIN)] == [sha, *(commit.sha for commit in before)]
        assert reads.read_file(MAIN, "notes.md") == "note\n"
