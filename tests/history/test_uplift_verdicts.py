"""What `uplift` and `compare` tell a user must be true and say what to do: an arm the model
cannot write is reported as not made while the others are scored; a difference's interval is
paired; leaving out `spell` keeps `spell-letters`; a skill's contribution has one sign on the
command line and in the report; each result gets a plain verdict line, and a retire candidate
the command that retires it."""

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from inprocess import evolve_scripted, scripted_workspace
from scripted import SPELL, USELESS, ScriptedWorld, skill_md
from wikiskill import api
from wikiskill.cli import app
from wikiskill.history.differences import (
    Difference,
    Kind,
    compare_caveat,
    retire_command,
    uplift_caveat,
    uplift_differences,
    verdict,
)
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.history.uplift import skill_names
from wikiskill.history.uplift_stats import Resampler, interval, pass_at_1, pass_hat_k
from wikiskill.store.uplift_record import recorded_uplift
from wikiskill.store.workspace import format_message
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import UNUSED_SERVER

EXAMPLE = Path(__file__).resolve().parents[2] / "benchmarks/example-qa"


class CannotWriteSkills(ScriptedWorld):
    """The scripted world, whose proposer model answers the skill writer in prose, no JSON."""

    def __call__(self, body: dict):
        if body["messages"][0]["content"].startswith("You are a Skill Writer"):
            return "I would tell the agent to read each word carefully before answering."
        return super().__call__(body)


def _word(index: int, letters: int) -> str:
    return "".join(chr(97 + (index * 5 + letter * 7 + 3) % 26) for letter in range(letters))


def correlated_suite(path: Path) -> Path:
    """example-qa whose 40 test tasks are mostly alike for every arm: 20 letter counts the agent
    always gets right, 16 seven-letter reversals it never does, and 4 five-letter reversals only
    a skill carrying the SPELL marker fixes. Main beats no skills by 0.1 on the same tasks; arms
    resampled apart, the 20 shared successes would swamp that."""
    shutil.copytree(EXAMPLE, path)
    rows = []
    for index in range(20):
        word = _word(index, 6)
        question = f"How many times does the letter '{word[0]}' occur in the word '{word}'?"
        rows.append({"id": f"count-{index:02d}", "question": question, "answer": str(word.count(word[0]))})
    for index, letters in enumerate([5] * 4 + [7] * 16):
        word = _word(index, letters)
        question = f"Write the word '{word}' backwards, letter by letter. Answer with the reversed word only."
        rows.append({"id": f"reverse-{index:02d}", "question": question, "answer": word[::-1]})
    (path / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def uplifted(tmp_path_factory):
    """`wikiskill uplift` with the default arms on a workspace whose main holds `spell` (no
    effect) and `spell-letters` (fixes the short reversals), the skill writer answering without
    JSON; the CLI's exit code and output."""
    root = tmp_path_factory.mktemp("verdicts")
    suite = correlated_suite(root / "suite")
    ws = api.init_workspace(
        root / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )
    files = {f"skills/{name}/SKILL.md": skill_md(name, marker) for name, marker in {"spell": USELESS}.items()}
    files["skills/spell-letters/SKILL.md"] = skill_md("spell-letters", SPELL)
    ws.commit(files, format_message("human: two skills", {"Round": 0, "Step": "human"}))
    with FakeOpenAIServer(CannotWriteSkills()) as server:
        out = CliRunner().invoke(app, ["-C", str(ws.root), "uplift", "--api-base", server.base_url])
        as_json = CliRunner().invoke(app, ["-C", str(ws.root), "uplift", "--api-base", server.base_url, "--json"])
    return ws, out, as_json


def test_a_self_written_arm_the_model_cannot_write_is_reported_not_made_and_none_and_main_are_scored(uplifted):
    ws, out, as_json = uplifted
    assert out.exit_code == 0, out.output
    assert re.search(r"^none\s+0\.500", out.output, re.MULTILINE) and re.search(r"^main\s+0\.600", out.output, re.M)
    not_made = next(line for line in out.output.splitlines() if line.startswith("arm self-written: not made: "))
    assert "the self-written arm's model gave no skills" in not_made and "no JSON object found" in not_made
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert [arm["arm"] for arm in data["arms"]] == ["none", "main"]
    assert data["not_made"]["self-written"].startswith("the self-written arm's model gave no skills")
    assert "self-written" in recorded_uplift(ws).not_made


def test_an_arm_s_difference_from_none_resamples_the_same_tasks_on_both_sides(uplifted):
    ws, _, _ = uplifted
    main = next(arm for arm in recorded_uplift(ws).arms if arm.arm == "main")
    assert main.delta == pytest.approx(0.1) and main.delta_ci95[0] > 0
    # the fixture discriminates: the same scores resampled apart give an interval that includes 0
    none_scores = np.array([[1.0]] * 20 + [[0.0]] * 20)
    main_scores = np.array([[1.0]] * 24 + [[0.0]] * 16)
    low, high = interval(Resampler.of(40, 1).means(main_scores) - Resampler.of(40, 2).means(none_scores))
    assert low < 0 < high


def test_leaving_out_spell_keeps_spell_letters_whose_name_it_prefixes(uplifted):
    ws, _, _ = uplifted
    assert skill_names(ws.read_files("uplift/without-spell", "skills")) == ["spell-letters"]
    assert skill_names(ws.read_files("uplift/without-spell-letters", "skills")) == ["spell"]
    values = {value.skill: value for value in recorded_uplift(ws).per_skill}
    assert values["spell"].marginal == 0.0 and values["spell"].retire
    assert values["spell-letters"].marginal == pytest.approx(0.1) and values["spell-letters"].ci95[0] > 0


def test_a_skill_s_contribution_has_the_same_sign_on_the_command_line_and_in_the_rendered_report(uplifted):
    ws, out, _ = uplifted
    shown = re.search(r"^spell-letters\s+(\S+)\s+\[(\S+), (\S+)\]", out.output, re.MULTILINE)
    assert shown is not None and shown.group(1) == "+0.100", out.output
    page = render_report(report_data(ws), "ws")
    row = re.search(r"<tr><td>spell-letters</td><td class=\"score\">(\S+)</td>\s*<td>\[(\S+), (\S+)\]</td>", page)
    assert row is not None and row.groups() == shown.groups()
    plotted = re.search(r'"x":\[([^\]]*)\],"y":\["arm main","skill spell","skill spell-letters"\]', page)
    assert plotted is not None and float(plotted.group(1).split(",")[2]) == pytest.approx(0.1)
    assert "main with spell-letters beats main without it by 0.100" in page


def test_uplift_prints_a_verdict_per_result_why_the_gate_can_differ_and_how_to_retire_a_candidate(uplifted):
    ws, out, _ = uplifted
    lines = out.output.splitlines()
    assert any(
        re.fullmatch(r"main beats no skills by 0\.100; the 95% interval \[\+0\.\d+, \+0\.\d+\] excludes 0", x)
        for x in lines
    )
    assert any(
        line.startswith("main with spell and main without it score the same; the 95% interval")
        and line.endswith("includes 0: no difference shown")
        for line in lines
    )
    retire = next(line for line in lines if "spell is a retire candidate" in line)
    command = retire.split("to retire it: ", 1)[1]
    assert command.startswith(f"git -C {shlex.quote(str(ws.root))} rm -r -q skills/spell && ")  # a hand-made skill
    assert "other tasks, split, repeats or interval method" in out.output


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    """An example-qa workspace whose round 1 merged `spell-letters` (val 0.5 -> 0.833)."""
    ws = scripted_workspace(tmp_path_factory.mktemp("evolved") / "ws")
    evolve_scripted(ws, rounds=1)
    return ws


def test_compare_prints_which_ref_beats_the_other_and_why_the_gate_can_differ(evolved):
    with FakeOpenAIServer(ScriptedWorld()) as server:
        out = CliRunner().invoke(
            app, ["-C", str(evolved.root), "compare", "baseline", "main", "--api-base", server.base_url]
        )
    assert out.exit_code == 0, out.output
    verdict = re.search(r"^main beats baseline by 0\.333; the 95% interval \[(\S+), (\S+)\] (.*)$", out.output, re.M)
    assert verdict is not None, out.output
    low = float(verdict.group(1))  # two fixed tasks of six: the interval starts at 0
    assert low == 0.0 and verdict.group(3) == "includes 0: no difference shown"
    assert "These are compare's numbers: all 6 val task(s)" in out.output, out.output


def test_a_retire_candidate_an_accepted_round_created_is_retired_by_the_rollback_command_it_is_given(evolved):
    from wikiskill.cli.common import command_name
    from wikiskill.history.differences import retire_command

    command = retire_command(evolved, "spell-letters", command_name())  # as the CLI prints it
    assert command.endswith(f" -C {shlex.quote(str(evolved.root))} rollback spell-letters")
    done = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert api.status(evolved).skills == []


def test_a_difference_of_graded_correlated_scores_is_shown_paired_where_unpaired_it_would_not_be():
    rng = np.random.default_rng(7)
    difficulty = rng.uniform(0.0, 1.0, 30)  # tasks differ a lot; both arms feel it alike
    without = np.clip(difficulty[:, None] + rng.normal(0.0, 0.01, (30, 3)), 0.0, 1.0)
    better = np.clip(difficulty[:, None] + 0.05 + rng.normal(0.0, 0.01, (30, 3)), 0.0, 1.0)
    resample = Resampler.of(30, seed=0)
    low, _ = interval(resample.means(better) - resample.means(without))
    assert low > 0
    low, high = interval(Resampler.of(30, seed=1).means(better) - Resampler.of(30, seed=2).means(without))
    assert low < 0 < high


def test_an_interval_holds_the_middle_95_percent_of_the_resampled_means():
    assert interval(np.arange(1001) / 1000) == pytest.approx((0.025, 0.975))


def test_pass_at_1_and_pass_hat_k_count_failed_trials_and_are_none_for_graded_scores():
    scores = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    assert pass_at_1(scores) == pytest.approx(0.5)
    assert pass_hat_k(scores) == pytest.approx(1 / 3)  # only the second task passed every trial
    graded = np.array([[0.5, 1.0], [1.0, 1.0]])
    assert pass_at_1(graded) is None and pass_hat_k(graded) is None


def test_a_resample_draws_every_task_and_each_drawn_task_s_trials_anew():
    resample = Resampler.of(2)
    assert set(np.unique(resample.tasks)) == {0, 1}
    means = Resampler.of(1).means(np.array([[0.0, 1.0]]))  # one task: only its trials vary
    assert set(np.unique(means)) == {0.0, 0.5, 1.0}
    assert means.mean() == pytest.approx(0.5, abs=0.05)


def test_the_same_seed_draws_the_same_tasks_and_the_default_seed_is_0():
    assert (Resampler.of(8).tasks == Resampler.of(8, seed=0).tasks).all()
    assert not (Resampler.of(8, seed=1).tasks == Resampler.of(8, seed=0).tasks).all()


def test_a_difference_s_verdict_names_its_own_level():
    difference = Difference(Kind.ARM, "main", "main", "no skills", 0.1, (0.05, 0.15), level=0.9)
    assert difference.verdict() == "main beats no skills by 0.100; the 90% interval [+0.050, +0.150] excludes 0"


def test_an_arm_is_compared_with_no_skills_and_a_hand_made_skill_is_retired_by_a_commit_of_your_own(uplifted):
    ws, _, _ = uplifted
    result = recorded_uplift(ws)
    assert result is not None
    arms = [row for row in uplift_differences(result) if row.kind is Kind.ARM]
    assert arms and all(row.subject == row.name and row.baseline == "no skills" for row in arms)
    skills = [row for row in uplift_differences(result) if row.kind is Kind.SKILL]
    assert [row.retire for row in skills] == [value.retire for value in result.per_skill] and any(
        row.retire for row in skills
    )
    root = ws.root
    assert retire_command(ws, "spell") == (
        f'git -C {root} rm -r -q skills/spell && git -C {root} commit -q -m "Retire spell: uplift shows no value"'
    )
    assert uplift_caveat(result) == (
        f"These are uplift's numbers: {result.tasks} {result.split} task(s) x {result.trials} trial(s), "
        "every arm on the same tasks, 95% intervals by a nested bootstrap (tasks, then trials). "
        "The gate judged each proposal on val, against the main of its round, with gate.repeats and its "
        "own test (gate.policy), and `compare` uses a BCa bootstrap of per-task differences: other tasks, "
        "split, repeats or interval method can give other numbers."
    )


def test_compare_s_caveat_names_its_tasks_repeats_and_the_gate_s_policy():
    assert compare_caveat("val", 12, 3, "paired") == (
        "These are compare's numbers: all 12 val task(s), gate.repeats 3, a BCa bootstrap of per-task "
        "differences. The gate judged each proposal against the main of its round under gate.policy paired "
        "(a sequential gate stops on part of val), and `uplift` uses the test split with a nested bootstrap: "
        "other tasks, split, repeats or interval method can give other numbers."
    )


@pytest.mark.parametrize(
    ("value", "bounds", "said"),
    [
        (0.05, (0.01, 0.09), "main beats no skills by 0.050; the 95% interval [+0.010, +0.090] excludes 0"),
        (-0.25, (-0.4, -0.1), "no skills beats main by 0.250; the 95% interval [-0.400, -0.100] excludes 0"),
        (
            -0.05,
            (-0.1, 0.0),
            "no skills beats main by 0.050; the 95% interval [-0.100, +0.000] includes 0: no difference shown",
        ),
        (
            0.0,
            (-0.1, 0.1),
            "main and no skills score the same; the 95% interval [-0.100, +0.100] includes 0: no difference shown",
        ),
    ],
)
def test_a_verdict_says_who_beats_whom_by_how_much_and_whether_its_interval_excludes_0(value, bounds, said):
    assert verdict("main", "no skills", value, bounds) == said
