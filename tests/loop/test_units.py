"""Units: skill format and names, gate decisions, trace sampling, config parsing, scorers."""

import pytest

from wikiskill.benchmarks.scoring import contains, exact, get_scorer, numeric, regex
from wikiskill.core.config import SamplingSettings
from wikiskill.core.errors import BenchmarkError, ConfigError, ProposalError
from wikiskill.knowledge.skills import normalize_name, parse_skill, skill_problems, with_front_matter
from wikiskill.loop.sampling import sample_traces
from wikiskill.store.settings import parse_config
from wikiskill.store.traces import TraceStep, Trajectory, cut

GOOD = ("---\nname: break-loop\ndescription: Leave a loop.\n---\n\n## When to Apply\nLooping.\n\n"
        "## When NOT to Apply\nProgressing.\n\n## Instructions\n1. Stop.\n")


@pytest.mark.parametrize("raw, expected", [
    ("Break_Repetition Loop", "break-repetition-loop"),
    ("  --Go  North!!--", "go-north"),
    ("a" * 80, "a" * 64),
    ("../../etc/passwd", "etc-passwd"),
])
def test_names_are_normalised(raw, expected):
    assert normalize_name(raw) == expected


@pytest.mark.parametrize("raw", ["", "!!!", None, 42])
def test_names_without_letters_are_rejected(raw):
    with pytest.raises(ProposalError):
        normalize_name(raw)


def test_skill_rules():
    assert skill_problems(GOOD, "break-loop") == []
    assert "must equal the directory name" in skill_problems(GOOD, "other")[0]
    assert skill_problems(GOOD.replace("name: break-loop", "name: Break--Loop"), "Break--Loop")
    assert skill_problems(GOOD.replace("description: Leave a loop.", "description: ''"), "break-loop")
    assert skill_problems(GOOD.replace("description: Leave a loop.", "description: " + "x" * 1025), "break-loop")
    assert "metadata must map strings to strings" in skill_problems(
        GOOD.replace("---\n\n", "metadata:\n  round: 3\n---\n\n", 1), "break-loop")
    assert skill_problems("no front matter", "x") == ["SKILL.md must start with YAML front matter between '---' lines"]
    assert skill_problems("---\n- a list\n---\nbody", "x") == ["front matter must be a YAML mapping"]
    assert ("missing sections: Instructions"
            in skill_problems(GOOD.replace("## Instructions", "## Steps"), "break-loop")[0])


def test_front_matter_is_rewritten_with_string_metadata():
    text = with_front_matter(GOOD.replace("name: break-loop", "name: Whatever"), "break-loop", {"wikiskill-round": "3"})
    skill = parse_skill(text)
    assert skill.name == "break-loop" and skill.metadata == {"wikiskill-round": "3"}
    assert skill.section("Instructions") == "1. Stop."
    assert skill_problems(text, "break-loop") == []


def trace(task_id: str, score: float) -> Trajectory:
    return Trajectory(task_id=task_id, split="train", kind="qa", question="q", score=score)


def test_sampling_takes_failures_then_successes_deterministically():
    traces = [trace(f"t{i:02d}", 1.0 if i % 3 == 0 else 0.0) for i in range(20)]
    settings = SamplingSettings(max_failures=5, max_successes=3)
    first = sample_traces(traces, settings, 1)
    assert [t.success for t in first] == [False] * 5 + [True] * 3
    assert first == sample_traces(list(reversed(traces)), settings, 1)
    assert first != sample_traces(traces, settings, 2)
    few = sample_traces(traces[:2], settings, 1)
    assert sorted(t.task_id for t in few) == ["t00", "t01"]


def test_traces_are_cut_keeping_head_and_tail():
    text = "HEAD" + "x" * 1000 + "TAIL"
    short = cut(text, 100)
    assert len(short) <= 100 and short.startswith("HEAD") and short.endswith("TAIL") and "characters cut" in short
    long = Trajectory(task_id="t", split="train", kind="interactive", question="q",
                      steps=[TraceStep(action=f"go {i}", observation="o" * 100, score=0) for i in range(500)])
    assert len(long.render(15_000)) <= 15_000


def test_config_errors_are_one_line():
    with pytest.raises(ConfigError, match=r"agent.max_steps: Input should be a valid integer"):
        parse_config("benchmark: example-qa\nagent:\n  max_steps: lots\n")
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        parse_config("- a\n- b\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_config("benchmark: [unclosed\n")
    with pytest.raises(ConfigError, match=r"line 2: unknown setting 'modle' \(did you mean 'model'\?\)$"):
        parse_config("benchmark: example-qa\nmodle: typo\n")


def test_role_settings_fall_back_and_overrides_win():
    config = parse_config("benchmark: example-qa\nmodel: openai/a\nproposer:\n  model: anthropic/p\n")
    assert config.role("agent").model == "openai/a" and config.role("proposer").model == "anthropic/p"
    overridden = config.with_overrides(model="ollama/x", api_base=None)
    assert overridden.role("proposer").model == "ollama/x"
    assert config.with_overrides(concurrency=9).role("proposer").model == "anthropic/p"


def test_scorers():
    assert exact("The  Answer.", "answer") == 1.0 and exact(None, "a") == 0.0
    assert numeric("about 1,234.0 items", "1234") == 1.0 and numeric("12", "13") == 0.0
    assert contains("it is Paris, France", "paris") == 1.0
    assert regex("ab12", r"ab\d+") == 1.0
    assert get_scorer("wikiskill.benchmarks.scoring:exact") is exact
    with pytest.raises(BenchmarkError):
        get_scorer("nope")


def test_a_retire_proposal_removes_the_whole_skill_folder_and_nothing_else():
    from wikiskill.knowledge.proposals import InvalidProposal, prepare_proposal

    files = {"spell/SKILL.md": "s", "spell/PURPOSE.md": "p", "spell/scripts/x.sh": "x", "other/SKILL.md": "o"}
    proposal = prepare_proposal({"action": "retire", "name": "Spell", "rationale": "overlaps other"}, files, 3)
    assert proposal.changes == {"skills/spell/SKILL.md": None, "skills/spell/PURPOSE.md": None,
                                "skills/spell/scripts/x.sh": None}
    with pytest.raises(InvalidProposal, match="cannot retire 'ghost': no such skill"):
        prepare_proposal({"action": "retire", "name": "ghost"}, files, 3)
