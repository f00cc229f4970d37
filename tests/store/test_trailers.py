"""Trailers are the workspace's database: every harness commit says its schema version, a newer
schema stops every command with "upgrade wikiskill", and nothing a commit says is silently dropped."""

import pytest
from typer.testing import CliRunner

from conftest import git
from wikiskill import api
from wikiskill.cli import app
from wikiskill.core.errors import SchemaError
from wikiskill.roles.settings import Role
from wikiskill.store.trailers import SCHEMA_VERSION, Action, Step, Trailers, format_message, role_keys
from wikiskill.store.workspace import MAIN, Workspace
from workspaces import merge_skill, new_workspace


def wikiskill(ws: Workspace, *args: str):
    return CliRunner().invoke(app, ["-C", str(ws.root), *args])


def test_every_commit_the_harness_writes_says_its_schema_version(evolved_workspace):
    out = git(
        evolved_workspace.root,
        "log",
        "--all",
        "--format=%H %(trailers:key=Wikiskill-Step,valueonly,separator=)|"
        "%(trailers:key=Wikiskill-Schema,valueonly,separator=)",
    )
    harness = [line for line in out.splitlines() if line.split("|")[0].split()[1:]]
    assert len(harness) > 10
    assert {line.split("|")[1] for line in harness} == {str(SCHEMA_VERSION)}


def test_a_commit_without_a_schema_version_reads_as_version_1(tmp_path):
    ws = new_workspace(tmp_path)
    ws.commit({"wiki/log.md": "# Log\n"}, "r1 maintain: wiki\n\nWikiskill-Round: 1\nWikiskill-Step: maintain\n")
    meta = ws.log(MAIN)[0].meta
    assert (meta.schema_version, meta.round, meta.step) == (1, 1, Step.MAINTAIN)


@pytest.mark.parametrize("command", [["status"], ["log"], ["audit"], ["show", "1"], ["evolve", "--rounds", "1"]])
def test_a_workspace_written_by_a_newer_schema_stops_every_command_with_upgrade_wikiskill(tmp_path, command):
    ws = new_workspace(tmp_path)
    merge_skill(ws, "spell-letters", 1)
    ws.tag("round/001", ws.head())
    newer = SCHEMA_VERSION + 1
    ws.commit(
        {"wiki/log.md": "# Log\n"},
        f"r2 maintain: wiki\n\nWikiskill-Schema: {newer}\nWikiskill-Round: 2\nWikiskill-Step: maintain\n",
    )
    head = ws.head()

    result = wikiskill(ws, *command)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and head[:10] in lines[0]
    assert f"written by a newer wikiskill (trailer schema {newer}" in lines[0] and "upgrade wikiskill" in lines[0]
    assert ws.head() == head and git(ws.root, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    "trailer",
    ["Wikiskill-Step: curate", "Wikiskill-Setup: 0123abcd", "Wikiskill-Score: high", "Wikiskill-Action: delete"],
)
def test_a_trailer_this_schema_does_not_know_is_an_error_naming_it_not_a_silent_drop(tmp_path, trailer):
    ws = new_workspace(tmp_path)
    ws.commit({"wiki/log.md": "# Log\n"}, f"r1 step\n\nWikiskill-Round: 1\n{trailer}\n")
    with pytest.raises(SchemaError, match=trailer.partition(":")[0]):
        api.status(ws)
    result = wikiskill(ws, "log")
    assert result.exit_code == 1 and ws.head()[:10] in result.output and trailer.partition(":")[0] in result.output


def test_per_role_cost_trailers_are_part_of_the_schema():
    meta = Trailers.parse(
        {"Wikiskill-Step": "rollout", "Wikiskill-Cost-Agent-USD": "0.5", "Wikiskill-Tokens-Agent": "10"}
    )
    assert meta.role_costs == {"agent": 0.5}


def test_each_roles_cost_trailer_is_read_back_as_that_role():
    for role in Role:
        cost, tokens = role_keys(role)
        meta = Trailers.parse({"Wikiskill-Step": "rollout", f"Wikiskill-{cost}": "0.5", f"Wikiskill-{tokens}": "10"})
        assert meta.role_costs == {role: 0.5}


def test_steps_actions_and_decisions_are_written_as_their_values():
    message = format_message("r1 gate", Trailers(round=1, step=Step.GATE, action=Action.NO_ACTION))
    assert message.splitlines()[2:] == [
        "Wikiskill-Schema: 1",
        "Wikiskill-Round: 1",
        "Wikiskill-Step: gate",
        "Wikiskill-Action: no_action",
    ]
    assert Trailers.parse({"Wikiskill-Action": "retire"}).action is Action.RETIRE
