"""The offline backend on real generated games: rules, agent, maintainer, proposer, and a
two-round evolve through the CLI with no key and no server."""

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git
from wikiskill.api import init_workspace
from wikiskill.benchmarks.textworld_cooking import TextWorldCooking
from wikiskill.cli import app
from wikiskill.contracts.roles import ProposerContext, WaitingCandidate
from wikiskill.core.errors import ConfigError
from wikiskill.knowledge.lint import lint_workspace
from wikiskill.knowledge.pages import parse_page
from wikiskill.knowledge.proposals import prepare_proposal
from wikiskill.knowledge.skills import parse_skill, skill_problems
from wikiskill.knowledge.wiki import Wiki, apply_maintainer_output
from wikiskill.knowledge.wiki_requests import WikiView
from wikiskill.loop.sampling import sample_traces
from wikiskill.loop.settings import SamplingSettings
from wikiskill.roles.offline.agent import OfflineAgent, _room
from wikiskill.roles.offline.maintainer import OfflineMaintainer, mine
from wikiskill.roles.offline.proposer import OfflineProposer
from wikiskill.roles.offline.rules import Rule, generalize, parse_rules, rule_line

TRAIN, VAL = 3, 2


@pytest.fixture(scope="module")
def bench():
    return TextWorldCooking(n_train=TRAIN, n_val=VAL, n_test=1)


@pytest.fixture(scope="module")
def baseline_traces(bench):
    agent = OfflineAgent(bench, [], max_steps=40, seed=0)
    return [asyncio.run(agent.run(task)) for task in bench.tasks("train")]


def skill(name: str, *lines: str):
    return parse_skill(
        f"---\nname: {name}\ndescription: d\n---\n\n## When to Apply\nx\n\n## When NOT to Apply\ny\n\n"
        "## Instructions\n" + "\n".join(lines) + "\n"
    )


def test_rules_round_trip_and_generalize():
    rules = parse_rules(
        [
            skill(
                "s",
                rule_line("avoid", "eat *", ["eat meal"]),
                rule_line("prefer", "take * from *"),
                "- Prose that is not a rule.",
            )
        ]
    )
    assert rules == [Rule("avoid", "eat *", ("eat meal",), "s"), Rule("prefer", "take * from *", (), "s")]
    assert rules[0].matches("eat red apple") and not rules[0].matches("eat meal")
    assert generalize(["take red tuna from fridge", "take carrot from counter"], tasks=2) == "take * from *"
    assert generalize(["cook red tuna with oven", "cook carrot with oven"], tasks=2) == "cook * with oven"
    assert generalize(["eat meal"], tasks=1) == "eat *"  # one episode is not enough to keep an object
    assert generalize(["eat meal", "eat meal"], tasks=2) == "eat meal"


def test_agent_is_deterministic_and_scored(baseline_traces, bench):
    again = OfflineAgent(bench, [], max_steps=40, seed=0)
    replay = asyncio.run(again.run(bench.tasks("train")[0]))
    assert replay.steps == baseline_traces[0].steps
    for trace in baseline_traces:
        assert 0.0 <= trace.score <= 1.0 and trace.kind == "interactive"
        scores = [step.score for step in trace.steps]
        assert scores == sorted(scores)  # cumulative
        room, explored = "start", []
        for step in trace.steps:
            if step.note is None:
                explored.append((room, step.action))
            room = _room(step.observation) or room
        assert len(explored) == len(set(explored))  # untried actions first: no (room, action) twice


def test_skills_steer_the_agent(bench):
    task = bench.tasks("train")[0]
    cookbook_first = skill("cookbook-first", "- Prefer `examine cookbook` whenever it is available.")
    steered = asyncio.run(OfflineAgent(bench, [cookbook_first], max_steps=5, seed=0).run(task))
    assert steered.steps[0].action == "examine cookbook"
    assert steered.steps[0].note == "skill cookbook-first: prefer `examine cookbook`"
    boxed = asyncio.run(OfflineAgent(bench, [skill("stay", "- Avoid `go *`.")], max_steps=25, seed=0).run(task))
    assert not any(step.action.startswith("go ") for step in boxed.steps if step.note is None)


def test_maintainer_mines_pages_that_pass_the_page_model_deterministically(baseline_traces):
    sampled = sample_traces(baseline_traces, SamplingSettings(), 1)
    wiki = Wiki(pages={}, log="# Evolution log\n")
    view = WikiView(index="", log="", pages={})
    first = OfflineMaintainer().run(1, view, sampled, 0.1, 0, TRAIN, 15000)
    second = OfflineMaintainer().run(1, view, sampled, 0.1, 0, TRAIN, 15000)
    assert first.output == second.output and first.output.create_patterns
    update = apply_maintainer_output(
        first.output, wiki, 1, [t.task_id for t in sampled], [t.task_id for t in baseline_traces]
    )
    assert update.refused == []
    assert update.report == [f"created {p.name}" for p in first.output.create_patterns]
    for finding in mine(sampled):
        for task_id, sequence, _ in finding.evidence:
            trace = next(t for t in sampled if t.task_id == task_id)
            assert sequence[-1] in [step.action for step in trace.steps]
    pages = [parse_page(path, text) for path, text in update.changes.items() if path.startswith("wiki/patterns/")]
    assert all(page.missing_sections() == [] and 10 <= len(page.body().splitlines()) <= 30 for page in pages)
    assert all(page.meta.evidence and page.meta.summary for page in pages)


class Library:
    """What the sandbox would serve, from a dict."""

    def __init__(self, files: dict[str, str], traces: list[str]):
        self.files, self.traces, self.reads = files, traces, []

    def read(self, path):
        self.reads.append(path)
        if path.startswith("traces/"):
            return "trace text", True
        if path not in self.files:
            raise LookupError(path)
        return self.files[path], False

    def list(self, path):
        if path == "traces":
            return [f"traces/{t}" for t in self.traces]
        return sorted(p for p in self.files if p.startswith(path + "/"))


def page(rule, pattern, evidence):
    return (
        f"---\nfinding: {'loss' if rule == 'avoid' else 'gain'}\nrule: {rule}\npattern: {pattern}\n"
        f"evidence: {evidence}\n---\n# p\n"
    )


def test_proposer_picks_strongest_uncovered_unrejected_pattern():
    files = {
        "wiki/patterns/avoid-eat-x.md": page("avoid", "eat *", ["a", "b", "c"]),
        "wiki/patterns/prefer-eat-meal.md": page("prefer", "eat meal", ["a", "b"]),
        "wiki/patterns/prefer-take-x.md": page("prefer", "take *", ["a", "b", "c", "d"]),
    }
    traces = ["a", "b", "c", "d", "e"]
    rejected = (
        "\n## r001 · create · prefer-scoring-actions · REJECTED\n\n+- Prefer `take *` whenever it is available.\n"
    )
    library = Library(files, traces)
    result = OfflineProposer(library, 4).run(ProposerContext(impact="# Skill impact\n" + rejected))
    proposal = result.proposal
    assert proposal["action"] == "create" and proposal["name"] == "avoid-losing-actions"
    assert "- Avoid `eat *` (except `eat meal`)." in proposal["skill_md"]
    assert sum(path.startswith("traces/") for path in library.reads) >= 4
    prepared = prepare_proposal(proposal, {}, 2)
    text = prepared.changes["skills/avoid-losing-actions/SKILL.md"]
    assert skill_problems(text, "avoid-losing-actions") == []

    files["skills/avoid-losing-actions/SKILL.md"] = text
    follow_up = OfflineProposer(Library(files, traces), 4).run(ProposerContext(impact=rejected))
    assert follow_up.proposal["action"] == "create" and follow_up.proposal["name"] == "prefer-scoring-actions"
    assert "- Prefer `eat meal` whenever it is available." in follow_up.proposal["skill_md"]

    del files["wiki/patterns/prefer-eat-meal.md"]
    files["wiki/patterns/avoid-dice-x.md"] = page("avoid", "dice *", ["e"])
    patch = OfflineProposer(Library(files, traces), 4).run(ProposerContext(impact=rejected))
    assert patch.proposal["action"] == "patch" and patch.proposal["name"] == "avoid-losing-actions"
    assert patch.proposal["edits"] == [{"op": "append", "content": "- Avoid `dice *`."}]
    patched = prepare_proposal(patch.proposal, {"avoid-losing-actions/SKILL.md": text}, 3)
    rules = parse_rules([parse_skill(patched.changes["skills/avoid-losing-actions/SKILL.md"])])
    assert rules[-1] == Rule("avoid", "dice *", (), "avoid-losing-actions")

    everything_covered = OfflineProposer(Library({}, traces), 4).run(ProposerContext(impact=""))
    assert everything_covered.proposal["action"] == "no_action"


def test_the_offline_proposer_leaves_a_locked_skill_and_one_waiting_for_review_alone():
    files = {
        "wiki/patterns/avoid-eat-x.md": page("avoid", "eat *", ["a", "b", "c"]),
        "wiki/patterns/prefer-take-x.md": page("prefer", "take *", ["a", "b"]),
    }
    waiting = WaitingCandidate("create", "avoid-losing-actions", "pending/r001-avoid-losing-actions")
    around_waiting = OfflineProposer(Library(files, ["a", "b", "c"]), 2).run(ProposerContext(pending=[waiting]))
    assert around_waiting.proposal["name"] == "prefer-scoring-actions"
    locked_too = ProposerContext(pending=[waiting], locked=["prefer-scoring-actions"])
    nothing = OfflineProposer(Library(files, ["a", "b", "c"]), 2).run(locked_too).proposal
    assert nothing["action"] == "no_action"
    assert "locked or waiting for review (avoid-losing-actions, prefer-scoring-actions)" in nothing["rationale"]


def test_offline_refuses_qa_suites(tmp_path):
    with pytest.raises(ConfigError, match="offline model cannot play"):
        init_workspace(tmp_path / "ws", benchmark="example-qa")


def test_offline_evolve_end_to_end(tmp_path: Path):
    runner = CliRunner()
    ws = tmp_path / "ws"
    result = runner.invoke(app, ["init", str(ws), "--train", str(TRAIN), "--val", str(VAL)])
    assert result.exit_code == 0, result.output
    config = ws / "wikiskill.yaml"
    config.write_text(config.read_text() + "wiki:\n  consolidate_every: 2\n")
    for _ in range(2):
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        assert result.exit_code == 0, result.output
        lint = runner.invoke(app, ["-C", str(ws), "lint"])
        assert (lint.exit_code, lint.output) == (0, "no problems\n")
    steps = git(
        ws, "log", "--first-parent", "--reverse", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "main"
    ).split()
    assert steps[:5] == ["settings", "baseline", "rollout", "maintain", "gate"]
    assert steps.count("gate") == 2 and steps.count("rollout") == 2
    assert steps[steps.index("maintain", 4) + 1] == "consolidate"  # round 2, between maintain and propose
    assert {"baseline", "round/001", "round/002"} <= set(git(ws, "tag").split())
    assert git(ws, "status", "--porcelain") == ""  # the test's own edit, committed as the settings step
    assert len(list(ws.glob("wiki/patterns/*.md"))) >= 1
    for skill_md in ws.glob("skills/*/SKILL.md"):
        assert skill_problems(skill_md.read_text(), skill_md.parent.name) == []
    assert lint_workspace(ws) == []  # pages, index, skills and every link they hold
    trace = next(ws.glob("raw/r001/train/*.json")).read_text()
    assert '"kind": "interactive"' in trace and '"observation"' in trace
