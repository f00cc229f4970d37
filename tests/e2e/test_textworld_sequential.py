"""The TextWorld default with `gate.policy: sequential`, offline end to end: a 10-game val pool in
batches of 5, a first round the offline roles propose, and a second whose skill forbids taking
and opening anything: that clear loss is rejected for futility after its first batch, on fewer
games than the first round's closer call."""

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wikiskill.cli import app
from wikiskill.roles.offline.rules import rule_line
from wikiskill.store.rounds import candidate_branch, round_state
from wikiskill.store.trailers import Action, Crossed, Decision, Step, Trailers, format_message
from wikiskill.store.workspace import MAIN, Workspace

pytestmark = pytest.mark.slow

HARMFUL = (
    "---\nname: avoid-taking\ndescription: Never take or open anything. Use before every action.\n---\n\n"
    "## When to Apply\nBefore choosing any action in a text game.\n\n## When NOT to Apply\nNever.\n\n"
    f"## Instructions\n{rule_line('avoid', 'take *')}\n{rule_line('avoid', 'open *')}\n"
)


def propose_by_hand(ws: Workspace, number: int, name: str, skill_md: str) -> None:
    """Round `number`'s proposal, as the propose step commits one."""
    branch = candidate_branch(number, name)
    ws.create_branch(branch, MAIN)
    ws.commit(
        {f"skills/{name}/SKILL.md": skill_md},
        format_message(
            f"r{number:03d} propose: create {name}",
            Trailers(round=number, step=Step.PROPOSE, action=Action.CREATE, skill=name),
            "forbid taking and opening",
        ),
        branch=branch,
    )


def test_a_clear_loss_on_textworld_stops_for_futility_on_fewer_games_than_a_closer_call(tmp_path: Path):
    runner = CliRunner()
    root = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(root), "--train", "3", "--val", "10"]).exit_code == 0
    config = yaml.safe_load((root / "wikiskill.yaml").read_text())
    config["gate"] = {"policy": "sequential", "batch": 5}
    (root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    first = runner.invoke(app, ["-C", str(root), "evolve", "--rounds", "1"])
    assert first.exit_code == 0, first.output
    ws = Workspace(root)
    closer = round_state(ws, 1).gate.meta
    assert closer.policy == "sequential" and closer.pool == 10 and closer.crossed is not None
    propose_by_hand(ws, 2, "avoid-taking", HARMFUL)
    second = runner.invoke(app, ["-C", str(root), "evolve", "--rounds", "1"])
    assert second.exit_code == 0, second.output
    loss = round_state(ws, 2).gate.meta
    assert (loss.decision, loss.crossed) == (Decision.REJECTED, Crossed.FUTILITY)
    assert loss.mean_diff < 0 and loss.statistic < 0 and loss.score == 0.0
    assert loss.tasks == 5 < closer.tasks  # stopped at its first batch; the closer call went on
    shown = runner.invoke(app, ["-C", str(root), "show", "2"])
    assert f"{loss.tasks} of 10 val tasks" in " ".join(shown.output.split())
    assert runner.invoke(app, ["-C", str(root), "audit"]).exit_code == 0
