"""`wikiskill watch`: real file-system events are linted at once; with commit, valid human edits
become `human` commits and invalid ones stay uncommitted."""

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import git
from wikiskill.integrations.watch import WatchReport, check, watch
from wikiskill.knowledge.lint import Problem
from wikiskill.store.workspace import Workspace, format_message
from workspaces import commit_skills, hears_ctrl_c, new_workspace, skill_md, until, write

BAD_LINK = "\nSee [the missing page](../../wiki/patterns/missing.md).\n"


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    workspace = new_workspace(tmp_path)
    commit_skills(workspace, ["spell-letters"])
    return workspace


class Watcher:
    """`watch` running in a thread, as a long-running `wikiskill watch` would."""

    def __init__(self, ws: Workspace, commit: bool = False):
        self.reports: list[WatchReport] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=watch, args=(ws, self.reports.append), kwargs={"commit": commit, "stop": self.stop, "timeout": 20}
        )
        self.thread.start()
        first = until(lambda: self.reports and self.reports[0])  # watching from now on
        assert first.changed == []

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive()


@pytest.fixture()
def watcher(ws):
    running = Watcher(ws)
    yield running
    running.close()


def saved_by_a_person(root: Path, path: str, text: str) -> None:
    thread = threading.Thread(target=write, args=(root, path, text))
    thread.start()
    thread.join()


def test_a_saved_problem_is_reported_and_its_fix_too(ws, watcher):
    saved_by_a_person(ws.root, "skills/spell-letters/SKILL.md", skill_md("spell-letters", extra=BAD_LINK))
    report = until(lambda: next((r for r in watcher.reports if r.problems), None))
    assert "skills/spell-letters/SKILL.md" in report.changed
    assert report.problems == [
        Problem(
            "skills/spell-letters/SKILL.md",
            "broken link '../../wiki/patterns/missing.md': wiki/patterns/missing.md does not exist",
        )
    ]
    assert report.committed is None  # without commit, nothing is committed

    seen = len(watcher.reports)
    saved_by_a_person(ws.root, "skills/spell-letters/SKILL.md", skill_md("spell-letters", extra="\nFixed.\n"))
    fixed = until(lambda: watcher.reports[seen:] and watcher.reports[-1])
    assert fixed.problems == []
    assert ws.dirty_paths("skills") == ["skills/spell-letters/SKILL.md"]


def test_with_commit_valid_edits_become_a_human_step_and_invalid_ones_stay(ws):
    running = Watcher(ws, commit=True)
    try:

        def person_edits() -> None:
            write(ws.root, "skills/new-skill/SKILL.md", skill_md("new-skill"))
            write(ws.root, "skills/broken-skill/SKILL.md", skill_md("broken-skill", extra=BAD_LINK))

        threading.Thread(target=person_edits).start()
        until(lambda: ws.dirty_paths("skills") == ["skills/broken-skill/SKILL.md"])
        until(lambda: any("skills/broken-skill/SKILL.md" in r.held_back for r in running.reports))
    finally:
        running.close()
    committed = [r for r in running.reports if r.committed]
    assert len(committed) == 1 and committed[0].committed_paths == ["skills/new-skill/SKILL.md"]
    head = ws.log("main")[0]
    assert head.sha == committed[0].committed == ws.head()
    assert head.subject == "human edit: skills/new-skill/SKILL.md"
    assert (head.meta.step.value, head.meta.round, head.meta.cost_usd) == ("human", 0, 0.0)
    assert git(ws.root, "show", "--name-only", "--format=", "HEAD").split() == ["skills/new-skill/SKILL.md"]
    assert git(ws.root, "log", "-1", "--format=%an", "HEAD").strip() == "Test Person"  # the person's identity


def test_commit_waits_for_the_lock_holder(ws):
    write(ws.root, "skills/new-skill/SKILL.md", skill_md("new-skill"))
    with ws.lock("wikiskill evolve"):
        report = check(ws, ["skills/new-skill/SKILL.md"], commit=True)
    assert report.committed is None and "workspace is busy" in report.note and "wikiskill evolve" in report.note
    assert check(ws, [], commit=True).committed == ws.head()  # the next save commits it


def test_units_go_in_together_when_they_need_each_other(ws):
    # a skill links to a page created in the same burst, and the index lists the page
    write(
        ws.root, "skills/spell-letters/PURPOSE.md", "# spell-letters\n\nFixes [p](../../wiki/patterns/reversal.md).\n"
    )
    write(ws.root, "wiki/patterns/reversal.md", "# reversal\n")
    write(ws.root, "wiki/index.md", "# Wiki index\n\n- [reversal](patterns/reversal.md): reversing fails\n")
    report = check(ws, [], commit=True)
    assert report.committed and report.held_back == []
    assert report.committed_paths == ["skills/spell-letters/PURPOSE.md", "wiki/index.md", "wiki/patterns/reversal.md"]
    assert ws.dirty_paths("skills", "wiki") == []

    # deleting the page would break the skill's link and the index: held back
    (ws.root / "wiki/patterns/reversal.md").unlink()
    report = check(ws, [], commit=True)
    assert report.committed is None and report.held_back == ["wiki/patterns/reversal.md"]
    assert {p.path for p in report.problems} == {"skills/spell-letters/PURPOSE.md", "wiki/index.md"}


def test_a_problem_already_on_main_does_not_block_other_edits(ws):
    ws.commit(
        {"wiki/index.md": "- [ghost](patterns/ghost.md): a page the maintainer never wrote\n"},
        format_message("r1 maintain", {"Round": 1, "Step": "maintain"}),
    )
    write(ws.root, "wiki/log.md", "# Log\n\nA note by hand.\n")
    report = check(ws, [], commit=True)
    assert report.committed_paths == ["wiki/log.md"]
    assert report.problems == [Problem("wiki/index.md", "lists patterns/ghost.md, which does not exist")]


def test_watch_returns_by_itself_once_its_timeout_passes(ws):
    reports: list[WatchReport] = []
    returned_after: list[float] = []
    stop = threading.Event()  # never set while the timeout is on trial; ends a watch that overstays

    def run() -> None:
        start = time.monotonic()
        watch(ws, reports.append, stop=stop, timeout=1.0)
        returned_after.append(time.monotonic() - start)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        thread.join(30)  # a bound for a busy machine, not a speed check
        assert not thread.is_alive(), "watch ran past its timeout"
    finally:
        stop.set()
    assert returned_after and returned_after[0] >= 1.0  # returned, without raising, and not before the timeout
    assert [report.changed for report in reports] == [[]]  # it was watching: the first report came


def test_cli_watch_reports_a_save_and_stops_cleanly_on_ctrl_c(ws):
    command = [sys.executable, "-u", "-c", "from wikiskill.cli import app; app()", "-C", str(ws.root), "watch"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=hears_ctrl_c
    )
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True)
        reader.start()
        until(lambda: any("no problems" in line for line in lines), timeout=15)  # watching from now on
        write(ws.root, "skills/spell-letters/SKILL.md", skill_md("spell-letters", extra=BAD_LINK))
        until(lambda: any("broken link" in line for line in lines))
        process.send_signal(signal.SIGINT)
        assert process.wait(60) == 0  # a bound for a busy machine, not a speed check
        reader.join(5)
    finally:
        process.kill()
    output = "".join(lines)
    assert "Watching skills/ and wiki/" in output and "changed: skills/spell-letters/SKILL.md" in output
    assert "✗ skills/spell-letters/SKILL.md: broken link" in output
    assert output.rstrip().endswith("stopped") and "Traceback" not in output
