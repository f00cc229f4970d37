"""Whole rounds with hostile roles: garbage from the maintainer, names that try to escape and a
proposer that never finishes are each recorded as a rejection, and the round still completes."""

import pytest

from conftest import git
from inprocess import evolve_scripted, scripted_workspace
from scripted import MAINTAINER_REPLY, ScriptedWorld, create


class LoopingWorld(ScriptedWorld):
    """A proposer that reads forever and never calls finish."""

    def propose(self, messages):
        from wikiskill.testing.fakeserver import Reply as ServerReply

        return ServerReply(tool_calls=[{"name": "read_file", "arguments": {"path": "../../etc/passwd"}}])


ROUNDS = {
    "garbage maintainer, front matter not a mapping": (
        ScriptedWorld(
            {1: {**create("spell-letters", "SPELL-OUT-MARKER"), "skill_md": "---\n- a\n---\nbody"}},
            maintainer_reply="{ not json",
        ),
        ["maintain failed", "invalid proposal: SKILL.md: front matter must be a YAML mapping"],
    ),
    "escaping names are normalised": (
        ScriptedWorld(
            {1: {**create("../../Spell Letters", "SPELL-OUT-MARKER")}},
            maintainer_reply={
                **MAINTAINER_REPLY,
                "create_patterns": [
                    {**MAINTAINER_REPLY["create_patterns"][0], "name": "../../../escape"},
                    {**MAINTAINER_REPLY["create_patterns"][0], "name": "/"},
                ],
            },
        ),
        [
            "created escape (asked for '../../../escape')",
            "refused, not written: create '/': page name '/' has no letters or digits",
            "name '../../Spell Letters' normalised to 'spell-letters'",
            "ACCEPTED",
        ],
    ),
    "a proposer that never finishes": (
        LoopingWorld(),
        ["invalid proposal: the proposer did not call finish within 20 turns"],
    ),
}


@pytest.mark.parametrize("case", ROUNDS)
def test_a_round_with_hostile_roles_records_every_rejection(tmp_path, case):
    world, reasons = ROUNDS[case]
    ws = scripted_workspace(tmp_path / "ws")
    result = evolve_scripted(ws, rounds=1, world=world)
    assert result.rounds_completed == 1
    history = git(ws.root, "log", "--all", "--format=%B")
    impact = (ws.root / "wiki/skill-impact.md").read_text()
    for reason in reasons:
        assert reason in history or reason in impact, reason
    assert git(ws.root, "status", "--porcelain") == ""
    assert not (tmp_path / "escape").exists() and not list(tmp_path.glob("*.md"))
    assert sorted(p.name for p in (ws.root / "skills").iterdir()) in ([".gitkeep"], [".gitkeep", "spell-letters"])
