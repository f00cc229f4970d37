"""The host API (wikiskill.integrations.host): render modes, past refs, history, and the live view following
real commits and merges through watchdog."""

import threading
from pathlib import Path

import pytest

from wikiskill import api
from wikiskill.core.errors import WikiskillError
from wikiskill.integrations.host import SkillSet
from wikiskill.knowledge.skillsblock import LOAD_SKILL_TOOL
from wikiskill.store.workspace import Workspace, format_message
from workspaces import TOPICS, commit_skills, merge_skill, new_workspace, skill_md, until


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    workspace = new_workspace(tmp_path)
    commit_skills(workspace, list(TOPICS))
    return workspace


def test_full_mode_shows_every_body_and_no_tool(ws):
    skills = SkillSet.open(ws.root, mode="full")
    block = skills.render("anything")
    assert skills.names() == sorted(TOPICS)
    for name in TOPICS:
        assert f'<skill name="{name}">' in block and f"Follow the {name} steps" in block
    assert skills.tools() == []


def test_the_prompt_command_in_full_mode_shows_name_and_description_before_each_body(ws):
    block = api.prompt(ws, mode="full")
    for name, (description, _) in TOPICS.items():
        start = block.index(f'<skill name="{name}">')
        assert (
            start < block.index(f"Description: {description}", start) < block.index(f"Follow the {name} steps", start)
        )


def test_index_mode_lists_names_and_answers_load_skill(ws):
    skills = SkillSet.open(ws.root)
    block = skills.render(mode="index")
    assert block.startswith("<available_skills>")
    for name, (description, _) in TOPICS.items():
        assert f"<name>{name}</name>" in block and description in block
        assert f"<location>skills/{name}/SKILL.md</location>" in block
    assert "Follow the" not in block  # bodies are loaded on demand
    assert skills.tools(mode="index") == [LOAD_SKILL_TOOL]
    body = skills.call_tool("load_skill", '{"name": "convert-units"}')
    assert body.startswith("## When to Apply") and "Follow the convert-units steps" in body
    assert skills.call_tool("load_skill", {"name": "convert-units"}) == body
    assert "needs a `name` argument" in skills.call_tool("load_skill", "not json")
    assert "No skill named 'nope'" in skills.call_tool("load_skill", {"name": "nope"})
    with pytest.raises(WikiskillError, match="unknown tool"):
        skills.call_tool("delete_everything", {})


def test_retrieve_mode_picks_the_relevant_skills(ws):
    skills = SkillSet.open(ws.root, mode="retrieve")
    task = "The API keeps answering 429 too many requests; how long should the client wait?"
    block = skills.render(task)
    assert "Follow the retry-rate-limits steps" in block
    shown = sorted(
        (block.index(f'<skill name="{name}">'), name) for name in TOPICS if f'<skill name="{name}">' in block
    )
    assert len(shown) == 3  # top_k from wikiskill.yaml's defaults
    assert shown[0][1] == "retry-rate-limits"  # best first
    assert block == api.prompt(ws, task=task, mode="retrieve")  # one renderer for agent, CLI and hosts
    with pytest.raises(WikiskillError, match="unknown skills mode"):
        skills.render(task, mode="everything")  # type: ignore[arg-type]


def test_past_ref_and_history(ws):
    first = ws.head()
    ws.commit(
        {
            "skills/convert-units/SKILL.md": skill_md("convert-units", description="Convert, then add."),
            "skills/spell-letters/SKILL.md": None,
            "skills/spell-letters/PURPOSE.md": None,
        },
        format_message("r2 gate: patch convert-units", {"Round": 2, "Step": "gate", "Decision": "accepted"}),
    )
    merge = merge_skill(ws, "new-skill", 3)

    now, then = SkillSet.open(ws.root), SkillSet.open(ws.root, ref=first)
    assert then.commit == first and now.commit == merge
    assert "spell-letters" in then.names() and "spell-letters" not in now.names()
    assert "new-skill" in now.names() and "new-skill" not in then.names()
    assert then.get("convert-units").description != now.get("convert-units").description == "Convert, then add."
    assert SkillSet.open(ws.root, ref="HEAD~2").names() == then.names()

    info = {skill.name: skill for skill in now.list()}
    convert = info["convert-units"]
    assert convert.files == ("PURPOSE.md", "SKILL.md")
    assert convert.evolution == ("r001 created: convert-units was needed",)
    assert [(c.round, c.step, c.decision) for c in convert.changes] == [
        (2, "gate", "accepted"),
        (1, "gate", "accepted"),
    ]
    # an accepted proposal shows as its gate merge on main, with the decision
    assert [(c.sha, c.round, c.step, c.decision) for c in info["new-skill"].changes] == [(merge, 3, "gate", "accepted")]
    assert [c.round for c in {s.name: s for s in then.list()}["convert-units"].changes] == [1]
    with pytest.raises(WikiskillError, match="unknown git ref"):
        SkillSet.open(ws.root, ref="no-such-ref")


def test_live_view_sees_a_real_merge_without_reloading_needlessly(ws):
    changed = []
    with SkillSet.open(ws.root).live(on_change=lambda skills: changed.append(skills.names())) as live:
        wiki_only = ws.commit(
            {"wiki/log.md": "# Log\n\nround 2\n"}, format_message("r2 maintain: wiki", {"Round": 2, "Step": "maintain"})
        )
        until(lambda: live.commit == wiki_only)
        assert changed == []  # the skills tree did not change: nothing was re-read

        writer = Workspace(ws.root)  # the gate, as another process would
        merge = merge_skill(writer, "brand-new", 2)
        until(lambda: "brand-new" in live.names())
        assert live.commit == merge
        assert "<name>brand-new</name>" in live.render(mode="index")
        assert changed == [sorted([*TOPICS, "brand-new"])]
    assert not live._observer.is_alive()


def test_live_view_of_the_working_tree_sees_a_file_written_by_another_thread(ws):
    with SkillSet.open(ws.root, ref=None).live() as live:
        assert live.commit is None and live.names() == sorted(TOPICS)

        def write() -> None:
            folder = ws.root / "skills" / "hand-made"
            folder.mkdir()
            (folder / "SKILL.md").write_text(skill_md("hand-made"), encoding="utf-8")

        threading.Thread(target=write).start()
        until(lambda: "hand-made" in live.names())
        assert "Follow the hand-made steps" in live.call_tool("load_skill", {"name": "hand-made"})
