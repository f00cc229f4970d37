"""`wikiskill report`: one static HTML page of a real evolve run, opened in a real headless
Chromium (the Debian package; .ci/run installs it; without it that test is skipped, outside CI)
with the network cut off, whose charts must render; its screenshot is kept under test-artifacts/."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import installed, needs_chromium
from inprocess import reviewed_and_rolled_back, scripted_workspace
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.cli import app
from wikiskill.history.htmlreport import ReportData, render_report, report_data
from wikiskill.history.status import RoundRow, Status
from wikiskill.testing.fakeserver import FakeOpenAIServer

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHARTS = ("val", "cost", "tradeoff", "skills", "wiki")


@pytest.fixture(scope="module")
def evolved(tmp_path_factory, evolved_workspace):
    """Three rounds through the CLI against the scripted server (accepted, rejected, no_action),
    then the accepted skill rolled back: a copy of the run's shared two-round workspace, one round on."""
    ws = tmp_path_factory.mktemp("report") / "ws"
    shutil.copytree(evolved_workspace.root, ws)
    with FakeOpenAIServer(ScriptedWorld()) as server:
        result = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1", "--api-base", server.base_url])
        assert result.exit_code == 0, result.output
    api.rollback(api.open_workspace(ws), "spell-letters")
    return ws


def headless(page: Path, profile: Path, *args: str) -> str:
    """Run Chromium on `page` with every network request refused, after its scripts ran."""
    command = [
        installed(*needs_chromium.args),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        "--virtual-time-budget=10000",
        "--window-size=1280,1800",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout


def chart(html: str, name: str) -> tuple[list[dict], dict]:
    """The traces and the layout of chart `name` as plotly was given them in the page."""
    start = html.index(f'"chart-{name}"')
    decoder = json.JSONDecoder()
    traces, end = decoder.raw_decode(html, html.index("[", start))
    layout, _ = decoder.raw_decode(html, html.index("{", end))
    return traces, layout


def test_the_score_chart_fits_its_axis_to_the_scores_so_small_gains_show():
    rows = [
        RoundRow(1, action="create", skill="a", val=0.507, incumbent=0.5, decision="accepted"),
        RoundRow(2, action="patch", skill="a", val=0.52, incumbent=0.507, decision="accepted"),
    ]
    data = report_data_of(rows)
    low, high = chart(render_report(data, "t"), "val")[1]["yaxis"]["range"]
    assert 0.49 <= low < 0.5 and 0.52 < high <= 0.53


def test_the_skills_timeline_says_what_each_colour_marks(evolved):
    traces, _ = chart(render_report(report_data(api.open_workspace(evolved)), "t"), "skills")
    legend = {trace["name"] for trace in traces}
    assert {"red: rejected", "green: accepted", "purple: rolled back"} <= legend


def report_data_of(rows: list[RoundRow]) -> ReportData:
    """The report of a history of `rows`, without a workspace."""
    return ReportData(Status("example-qa", "m", len(rows), rows[-1].val, [], 0, 0, 0.0, 0, {}), rows, [])


def test_the_report_reads_rounds_skills_wiki_and_the_latest_validation_from_history(evolved):
    data = report_data(api.open_workspace(evolved))
    assert [(row.round, row.action, row.decision) for row in data.rounds] == [
        (1, "create", "accepted"),
        (2, "create", "rejected"),
        (3, "no_action", "no_action"),
        (3, "rollback", "rolled_back"),
    ]
    assert sum(row.tokens for row in data.rounds) > 0
    assert [size.round for size in data.wiki] == [1, 2, 3] and data.wiki[0].pages == 1 and data.wiki[0].tokens > 0
    assert data.validated_round == 2 and data.decision == "rejected"
    assert len(data.tasks) == 6 and all(task.incumbent is not None for task in data.tasks)


@needs_chromium
def test_the_report_renders_its_charts_offline_in_a_headless_browser(evolved, tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["-C", str(evolved), "report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=", html)  # plotly.js is inlined: nothing to fetch

    dom = headless(out, tmp_path / "profile", "--dump-dom")
    segments = dict(re.findall(r'id="chart-(\w+)"(.*?)(?=id="chart-|<h2)', dom, re.S))
    assert sorted(segments) == sorted(CHARTS)
    for name, segment in segments.items():
        assert '<svg class="main-svg"' in segment, f"the {name} chart did not render"
    assert len(re.findall(r'class="point"', dom)) >= 10  # markers and bars were drawn, not empty axes
    assert "candidate: accepted" in dom and "candidate: rejected" in dom
    assert "spell-letters" in dom and "useless-hint" in dom and "rollback" in dom
    assert dom.count("<tr class=") == 6

    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "report.png"
    headless(out, tmp_path / "profile", f"--screenshot={screenshot}")
    assert screenshot.stat().st_size > 20_000
    print(f"report screenshot: {screenshot}")


def test_a_workspace_that_has_not_evolved_gets_a_page_that_says_so(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    page = api.report(ws, tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "0 round(s) completed" in page and "No candidate has been validated yet." in page


def test_score_and_cost_per_round_has_one_row_per_round_and_a_rollback_row_of_its_own(tmp_path):
    ws = reviewed_and_rolled_back(tmp_path / "ws")
    page = render_report(report_data(ws), "t")
    table = page.split('<table id="round-costs">')[1].split("</table>")[0]
    first_cells = re.findall(r"<tr><td>([^<]*)</td>", table)
    assert first_cells == ["1", "2", "rollback"]
    assert "pending → accepted" in table


def test_report_out_says_that_it_wrote_the_task_pages_beside_the_page(evolved, tmp_path):
    out = tmp_path / "demo-report.html"
    result = CliRunner().invoke(app, ["-C", str(evolved), "report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "demo-report-tasks"
    assert len(list(folder.glob("*.html"))) == 6
    assert f"Wrote {out}\nand 6 task page(s) in {folder}/, which its rows link to" in result.output
