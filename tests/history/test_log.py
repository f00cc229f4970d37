"""`wikiskill log` shows one row per round, whole candidate names, and manual rollbacks as rows of
their own."""

from typer.testing import CliRunner

from inprocess import reviewed_and_rolled_back
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


def test_log_has_one_row_per_round_in_its_final_state_and_a_rollback_row_of_its_own(tmp_path):
    ws = reviewed_and_rolled_back(tmp_path / "ws")
    rows = [row for row in api.round_log(ws) if not row.is_rollback]
    assert [(row.round, row.decision_text) for row in rows] == [
        (1, "pending → accepted"),
        (2, "rejected"),
        (3, "no_action"),
    ]
    result = CliRunner().invoke(app, ["-C", str(ws.root), "log"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    first_cells = [line.split()[0] for line in result.output.splitlines() if line.strip()]
    numbered = [cell for cell in first_cells if cell.isdigit()]
    assert numbered == ["001", "002", "003"]
    assert "rollback spell-letters" in result.output and "pending → accepted" in result.output
