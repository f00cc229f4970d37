"""Two rounds through the CLI and litellm against a local scripted OpenAI-compatible server:
round 1's proposal raises val (accepted, merged), round 2's does not (rejected, tagged)."""

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git
from scripted import SPELL, USELESS, ScriptedWorld
from wikiskill import api
from wikiskill.cli import app
from wikiskill.knowledge.skills import skill_problems
from wikiskill.store.workspace import Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer


def agent_prompts(requests: list[dict]) -> list[str]:
    return [
        r["messages"][0]["content"]
        for r in requests
        if r["messages"][0]["content"].startswith("You are a careful problem solver")
    ]


@pytest.fixture(scope="module")
def evolved(evolved_workspace):
    """The run's shared evolved workspace (conftest), its server's requests during the rounds and
    during `eval --split test`, and a CLI runner."""
    yield evolved_workspace.root, evolved_workspace.during, evolved_workspace.after, CliRunner()


def trailers(ws: Path, ref: str) -> dict:
    out = git(ws, "log", "-1", "--format=%(trailers:only,unfold)", ref)
    return dict(line.split(": ", 1) for line in out.splitlines() if line)


def test_history_shape(evolved):
    ws, *_ = evolved
    subjects = git(ws, "log", "--first-parent", "--reverse", "--format=%s", "main").splitlines()
    steps = [
        trailers(ws, sha).get("Wikiskill-Step")
        for sha in git(ws, "log", "--first-parent", "--reverse", "--format=%H", "main").split()
    ]
    assert steps == [None, "baseline", "rollout", "maintain", "gate", "rollout", "maintain", "gate"], subjects
    assert subjects[1] == "baseline: val solved 3/6, score 0.500"  # tasks solved, then the mean score
    merge = git(ws, "rev-list", "--first-parent", "--merges", "main").split()
    assert len(merge) == 1
    parents = git(ws, "log", "-1", "--format=%P", merge[0]).split()
    assert len(parents) == 2
    side = git(ws, "log", "--format=%(trailers:key=Wikiskill-Step,valueonly)", f"{parents[0]}..{parents[1]}").split()
    assert side == ["validate", "propose"]
    gate = trailers(ws, merge[0])
    assert gate["Wikiskill-Decision"] == "accepted"
    assert gate["Wikiskill-Round"] == "1"
    assert float(gate["Wikiskill-Score"]) == pytest.approx(5 / 6, abs=1e-4)
    assert float(gate["Wikiskill-Incumbent"]) == pytest.approx(0.5)
    assert "Wikiskill-Cost-USD" in gate
    tags = set(git(ws, "tag").split())
    assert {"baseline", "round/001", "round/002", "rejected/r002-useless-hint"} <= tags
    assert git(ws, "branch", "--list", "skill/*").strip() == ""
    rejected = trailers(ws, "main")
    assert rejected["Wikiskill-Decision"] == "rejected" and rejected["Wikiskill-Skill"] == "useless-hint"
    assert git(ws, "status", "--porcelain") == ""
    assert git(ws, "rev-parse", "round/002") == git(ws, "rev-parse", "main")


def test_skills_on_main_and_in_prompts(evolved):
    ws, during, after, _ = evolved
    assert (ws / "skills/spell-letters/SKILL.md").is_file()
    assert not (ws / "skills/useless-hint").exists()
    assert git(ws, "show", "rejected/r002-useless-hint:skills/useless-hint/SKILL.md").count(USELESS) == 1
    for skill_md in ws.glob("skills/*/SKILL.md"):
        assert skill_problems(skill_md.read_text(), skill_md.parent.name) == []
    purpose = (ws / "skills/spell-letters/PURPOSE.md").read_text()
    assert "- r001 created: reversal tasks fail" in purpose
    assert (
        "- r001 create accepted: val 0.833, incumbent 0.500; "
        "helped 2 val task(s) (2 newly solved), hurt 0 (0 no longer solved)"
    ) in purpose
    assert (
        "## Patterns Addressed\n\n- [Reversal slips](../../wiki/patterns/reversal-slips.md): words reversed" in purpose
    )
    prompts = agent_prompts(during)
    assert not any(SPELL in p for p in prompts[:6])  # baseline val
    assert any(SPELL in p for p in prompts) and any(USELESS in p for p in prompts)  # candidates' validation
    later = agent_prompts(after)
    assert len(later) == 6
    assert all(SPELL in p and USELESS not in p for p in later)


def test_skill_impact_and_wiki(evolved):
    ws, *_ = evolved
    impact = (ws / "wiki/skill-impact.md").read_text()
    assert "## r001 · create · spell-letters · ACCEPTED" in impact
    assert "## r002 · create · useless-hint · REJECTED" in impact
    assert "+2. SPELL-OUT-MARKER: read the lines bottom-up." in impact
    assert "tag rejected/r002-useless-hint" in impact
    assert "name 'Useless Hint' normalised" not in impact  # notes live in the commit, not the entry
    assert (ws / "wiki/patterns/reversal-slips.md").read_text().startswith("---\nslug: reversal-slips\n")
    assert "## Round 2" in (ws / "wiki/log.md").read_text()


def test_purpose_and_skill_impact_give_one_effect_in_one_wording(evolved):
    ws, *_ = evolved
    impact = (ws / "wiki/skill-impact.md").read_text()
    entry = impact[impact.index("## r001 · create · spell-letters") :]
    effect = re.search(r"^- Effect: (.+)$", entry, re.MULTILINE).group(1)
    purpose = (ws / "skills/spell-letters/PURPOSE.md").read_text()
    assert (
        re.search(r"^- r001 create accepted: val [\d.]+, incumbent [\d.]+; (.+)$", purpose, re.MULTILINE).group(1)
        == effect
    )
    assert "Fixed" not in entry and "Broken" not in entry


def test_status_and_log_read_git(evolved):
    ws, _, _, runner = evolved
    result = runner.invoke(app, ["-C", str(ws), "log"])
    assert result.exit_code == 0
    assert "accepted" in result.output and "rejected" in result.output
    result = runner.invoke(app, ["-C", str(ws), "status"])
    assert "2 completed" in result.output and "0.833" in result.output and "spell-letters" in result.output
    block = int(re.search(r"skills block: (\d+) tokens", result.output).group(1))
    assert block == len(runner.invoke(app, ["-C", str(ws), "prompt"]).output) // 4
    result = runner.invoke(app, ["-C", str(ws), "prompt"])
    assert SPELL in result.output


def test_skill_usage_counts_prompts_and_the_tasks_its_merge_helped(evolved):
    ws, *_ = evolved
    usage = api.skill_usage(Workspace.open(ws))
    short_reversals = sum(
        1
        for line in (Path(__file__).parents[2] / "benchmarks/example-qa/train.jsonl").open()
        if "backwards" in line and len(json.loads(line)["answer"]) <= 6
    )
    assert set(usage) == {"spell-letters"}  # the rejected useless-hint never reached main
    assert usage["spell-letters"].prompts == 12  # every train task of round 2
    assert (usage["spell-letters"].helped, usage["spell-letters"].hurt) == (2 + short_reversals, 0)
    listed = CliRunner().invoke(app, ["-C", str(ws), "skills"])
    assert re.search(r"spell-letters .* 12 .* " + str(2 + short_reversals) + r" .* 0$", listed.output, re.MULTILINE)


def test_skills_commands_and_running_inside_the_workspace(evolved, monkeypatch):
    ws, _, _, runner = evolved
    monkeypatch.chdir(ws / "wiki")
    listed = runner.invoke(app, ["skills"])
    assert listed.exit_code == 0 and "spell-letters" in listed.output and "useless-hint" not in listed.output
    shown = runner.invoke(app, ["skills", "show", "spell-letters"])
    assert SPELL in shown.output and "Evolution History" in shown.output
    past = runner.invoke(app, ["skills", "--ref", "baseline"])
    assert "spell-letters" not in past.output
    missing = runner.invoke(app, ["skills", "show", "nope"])
    assert missing.exit_code == 1 and "no skill named 'nope'" in missing.output


def test_rollback_reverts_and_the_incumbent_is_reestablished(evolved, tmp_path):
    source, _, _, runner = evolved
    ws = tmp_path / "ws"
    shutil.copytree(source, ws)
    merge = git(ws, "rev-list", "--first-parent", "--merges", "main").split()[0]
    result = runner.invoke(app, ["-C", str(ws), "rollback", "spell-letters"])
    assert result.exit_code == 0, result.output
    assert not (ws / "skills/spell-letters").exists()
    assert (ws / "wiki/patterns/reversal-slips.md").exists()  # the wiki stays
    head = trailers(ws, "main")
    assert head["Wikiskill-Step"] == "rollback" and head["Wikiskill-Reverts"] == merge
    assert git(ws, "diff", "--stat", "baseline", "main", "--", "skills") == ""
    assert "## r001 · rollback · spell-letters · ROLLED_BACK" in (ws / "wiki/skill-impact.md").read_text()
    again = runner.invoke(app, ["-C", str(ws), "rollback", "spell-letters"])
    assert again.exit_code == 1 and "nothing to roll back" in again.output
    assert git(ws, "status", "--porcelain") == ""

    with FakeOpenAIServer(ScriptedWorld()) as server:
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "1", "--api-base", server.base_url])
        assert result.exit_code == 0, result.output
        val_calls = [r for r in server.requests if r["messages"][0]["content"].startswith("You are a careful")]
    assert len(val_calls) == 12  # round 3 rollout only: the baseline tree's val score is reused
    status = runner.invoke(app, ["-C", str(ws), "status"])
    assert "incumbent   0.500" in status.output and "3 completed" in status.output


def test_compare_reads_evaluations_git_records_without_calling_a_model(evolved):
    ws, _, _, runner = evolved
    result = runner.invoke(app, ["-C", str(ws), "compare", "baseline", "main"])  # no server is running now
    assert result.exit_code == 0, result.output
    assert "baseline 0.500 → main 0.833: mean difference +0.3333" in result.output
    assert "2 fixed, 0 broken" in result.output and "4 same" in result.output


def test_every_score_commit_carries_its_fingerprint(evolved):
    ws, *_ = evolved
    for ref in ("baseline", "round/001"):
        commit = trailers(ws, ref)
        assert {"Wikiskill-Fingerprint", "Wikiskill-Eval-Setup", "Wikiskill-Skills-Id", "Wikiskill-Results"} <= set(
            commit
        ), ref
        assert commit["Wikiskill-Results"] in git(ws, "ls-tree", "-r", "--name-only", ref, "raw").split()


def test_show_reads_a_rejected_candidate_from_its_tag(evolved):
    ws, *_ = evolved
    story = api.show_round(api.open_workspace(ws), 2)
    assert (story.action, story.skill, story.decision) == ("create", "useless-hint", "rejected")
    assert len(story.validation) == 6 and len(story.reads) == 4 and story.proposer_turns == 5
    assert story.rationale.startswith("reversal tasks fail; Useless Hint")


def test_the_readmes_decision_log_reads_one_line_per_decision(evolved, tmp_path):
    source, _, _, runner = evolved
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    command = re.search(r"`git (log [^`]*)` reads\s+as\s+one\s+line\s+per\s+decision", readme).group(1)

    def decision_log(ws: Path) -> list[str]:
        return git(ws, *shlex.split(command)).splitlines()

    decisions = [" ".join(line.split()[1:5]) for line in decision_log(source)]  # the short hash first
    assert decisions == ["r002 gate: rejected useless-hint", "r001 gate: accepted spell-letters"]
    ws = tmp_path / "ws"
    shutil.copytree(source, ws)
    assert runner.invoke(app, ["-C", str(ws), "rollback", "spell-letters"]).exit_code == 0
    assert len(decision_log(ws)) == 3 and "rollback" in decision_log(ws)[0]
