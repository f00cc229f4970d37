"""Trigger rates, from the real Qwen Code CLI's transcripts against the scripted server: main holds
two skills; the model loads `spell-letters` on reversals only and never loads `count-hint`.
`uplift` gives each skill its rate on the tasks it is for (where leaving it out changed the
score, or its PURPOSE.md names them) and on the others; the report shows them; the proposer is
shown the skill loaded too rarely where it applies, and its `describe` is validated like any
other change."""

import pytest
from typer.testing import CliRunner

from conftest import needs_cli
from qwen_world import QwenCodeWorld, tiny_workspace
from scripted import SPELL, skill_md
from wikiskill import api
from wikiskill.cli import app
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.roles.coding_agents.qwen_code import QwenCode
from wikiskill.store.trailers import Action, SkillLoading, Step
from wikiskill.store.uplift_record import rarely_loaded, recorded_uplift
from wikiskill.store.workspace import format_message
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import edit_config

pytestmark = [needs_cli(QwenCode), pytest.mark.slow]

DESCRIBE = {
    "action": "describe",
    "name": "count-hint",
    "description": "Load this skill whenever a question asks how many times a letter occurs in a word.",
    "rationale": "count-hint is never loaded on val-00, the task it was made for",
}


class ProposerSeen(QwenCodeWorld):
    """The world, keeping the proposer's user prompt of each turn."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proposer_prompts: list[str] = []

    def propose(self, messages):
        self.proposer_prompts.append(messages[1]["content"])
        return super().propose(messages)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    root = tmp_path_factory.mktemp("triggers")
    world = ProposerSeen(reversals_only=True, proposals={1: DESCRIBE}, trace_ids=["train-00", "train-01"])
    with FakeOpenAIServer(world) as server:
        ws = tiny_workspace(root, server)
        files = {
            "skills/spell-letters/SKILL.md": skill_md("spell-letters", SPELL),
            "skills/count-hint/SKILL.md": skill_md("count-hint", "TALLY"),
            "skills/count-hint/PURPOSE.md": "# count-hint\n\n## Origin\n\nMade for val-00, a count that went wrong.\n",
        }
        ws.commit(files, format_message("human: two skills", {"Round": 0, "Step": "human"}))
        shown = CliRunner().invoke(
            app, ["-C", str(ws.root), "uplift", "--split", "val", "--arms", "main"], env={"COLUMNS": "250"}
        )
        assert shown.exit_code == 0, shown.output
        result = recorded_uplift(ws)
        evolved = evolve_one_round(ws)
    return ws, result, world, evolved, shown.output


def evolve_one_round(ws):
    edit_config(ws, **{"proposer.min_trace_reads": 2})
    return api.evolve(ws, 1)


def test_each_skill_has_its_trigger_rate_on_the_tasks_it_is_for_and_on_the_others(measured):
    _, result, _, _, _ = measured
    values = {value.skill: value for value in result.per_skill}
    spell, count = values["spell-letters"], values["count-hint"]
    assert spell.loading is SkillLoading.ON_DEMAND and count.loading is SkillLoading.ON_DEMAND
    # leaving spell-letters out breaks tattoo only; it is loaded on both reversals, not on the count
    assert (spell.tasks_for, spell.rate_for, spell.rate_other) == (["val-01"], 1.0, 0.5)
    assert spell.loads == 2 and not spell.never_loaded and not spell.rarely_loaded
    # count-hint changes no score, but its PURPOSE.md names val-00: loaded there in none of the runs
    assert (count.tasks_for, count.rate_for, count.rate_other) == (["val-00"], 0.0, 0.0)
    assert count.loads == 0 and count.never_loaded and count.rarely_loaded
    assert count.trigger_text() == "loaded 0% on the 1 task(s) it is for, 0% on the others"


def test_uplift_and_the_report_show_each_skills_trigger_rate_and_never_loaded(measured):
    ws, _, _, _, shown = measured
    assert "trigger rate" in shown
    assert "loaded 100% on the 1 task(s) it is for, 50% on the others" in shown
    line = next(line for line in shown.splitlines() if "count-hint" in line and "%" in line)
    assert "loaded 0% on the 1 task(s) it is for, 0% on the others" in line and "never loaded by the agent" in line
    html = render_report(report_data(ws), "t")
    assert "loaded 100% on the 1 task(s) it is for, 50% on the others" in html
    assert "loaded 0% on the 1 task(s) it is for, 0% on the others (never loaded)" in html


def test_the_proposer_is_shown_the_skill_loaded_too_rarely_and_its_describe_is_validated(measured):
    ws, _, world, evolved, _ = measured
    assert [value.skill for value in rarely_loaded(ws)] == ["count-hint"]
    prompt = world.proposer_prompts[0]
    assert "loads too rarely where they apply" in prompt
    assert "- count-hint: loaded 0% on the 1 task(s) it is for, 0% on the others" in prompt
    assert "spell-letters: loaded" not in prompt
    gate = next(commit.meta for commit in ws.log("main") if commit.meta.step == Step.GATE)
    assert (gate.action, gate.skill) == (Action.DESCRIBE, "count-hint")
    assert (gate.skill_loading, gate.skill_loads, gate.skill_runs) == (SkillLoading.ON_DEMAND, 0, 3)
    assert gate.never_loaded is None  # no gain: nothing to flag
    assert evolved.decisions == ["rejected"]  # the same val score: the strict gate merges no tie
