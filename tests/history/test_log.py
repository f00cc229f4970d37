"""`wikiskill log` shows whole candidate names and manual rollbacks as rows of their own."""

from typer.testing import CliRunner

from wikiskill import api
from wikiskill.cli import app
from workspaces import merge_skill, new_workspace

LONG = "prefer-scoring-the-recipe-before-cooking-any-ingredient-twice"


def test_log_shows_whole_candidate_names_and_a_manual_rollback_row(tmp_path):
    ws = new_workspace(tmp_path)
    merge_skill(ws, LONG, 1)
    ws.tag("round/001", ws.head())
    api.rollback(ws, skill=LONG)

    rows = api.round_log(ws)
    assert [(row.round, row.skill, row.decision) for row in rows] == [(1, LONG, "accepted"), (1, LONG, "rolled_back")]
    assert rows[1].action == "rollback"

    result = CliRunner().invoke(app, ["-C", str(ws.root), "log"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next(line for line in lines if "candidate" in line)
    start, end = header.index("candidate"), header.index(" val ")
    shown = "".join(line[start:end].strip() for line in lines[lines.index(header) + 1 :])
    assert shown.count(LONG) == 2 and "…" not in result.output
    assert "rolled_back" in result.output
