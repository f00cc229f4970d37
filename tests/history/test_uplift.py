"""`wikiskill uplift`: arms scored on the same tasks K times, with intervals; main above none where
main's skill is what makes the answers right; each skill's leave-one-out value; recorded in git,
counted as a look at test, and read back by the report."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from inprocess import WorldModel
from scripted import SPELL, USELESS, ScriptedWorld, skill_md
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.cli import app
from wikiskill.core.errors import WikiskillError
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.store.trailers import Decision, SkillLoading, Step
from wikiskill.store.uplift_record import recorded_uplift, retire_candidates
from wikiskill.store.workspace import format_message
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import UNUSED_SERVER

EXAMPLE = Path(__file__).resolve().parents[2] / "benchmarks/example-qa"


class WritesItsOwn(ScriptedWorld):
    """The scripted world, whose proposer model also writes skills from instructions alone: a
    plausible skill without the marker that makes reversals right."""

    def __call__(self, body: dict):
        system = body["messages"][0]["content"]
        if system.startswith("You are a Skill Writer"):
            assert "Task 1" in body["messages"][1]["content"] and "<answer>" not in body["messages"][1]["content"]
            return json.dumps({"skills": [{"name": "read-carefully", "skill_md": skill_md("read-carefully", "CALM")}]})
        return super().__call__(body)


class WritesNothing(ScriptedWorld):
    """The scripted world, whose proposer model counts the requests to write skills and writes none."""

    asked = 0

    def __call__(self, body: dict):
        if body["messages"][0]["content"].startswith("You are a Skill Writer"):
            self.asked += 1
            return json.dumps({"skills": []})
        return super().__call__(body)


def reversal_test_suite(path: Path, tasks: int = 12) -> Path:
    """example-qa whose test split is five-letter reversals: the SPELL skill fixes every one."""
    shutil.copytree(EXAMPLE, path)
    rows = []
    for index in range(tasks):
        word = "".join(chr(97 + (index * 5 + letter * 7 + 3) % 26) for letter in range(5))
        question = f"Write the word '{word}' backwards, letter by letter. Answer with the reversed word only."
        rows.append({"id": f"test-{index:02d}", "question": question, "answer": word[::-1]})
    (path / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    root = tmp_path_factory.mktemp("uplift")
    suite = reversal_test_suite(root / "suite")
    ws = api.init_workspace(
        root / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )
    skills = {"spell-letters": SPELL, "useless-hint": USELESS}
    files = {f"skills/{name}/SKILL.md": skill_md(name, marker) for name, marker in skills.items()}
    ws.commit(files, format_message("human: two skills", {"Round": 0, "Step": "human"}))
    curated = root / "curated/spell"
    curated.mkdir(parents=True)
    (curated / "SKILL.md").write_text(skill_md("spell", SPELL))
    model = WorldModel(WritesItsOwn())
    options = RunOptions(model_factory=lambda role: model)
    result = api.uplift(ws, "test", 2, ["main", "self-written", f"curated:{curated}"], options)
    return ws, result


def test_each_arm_has_a_mean_an_interval_and_its_difference_from_none(measured):
    ws, result = measured
    arms = {arm.arm: arm for arm in result.arms}
    assert list(arms)[:3] == ["none", "main", "self-written"] and list(arms)[3].startswith("curated:")
    assert (result.split, result.trials, result.tasks) == ("test", 2, 12)
    none, main = arms["none"], arms["main"]
    assert (none.mean, main.mean) == (0.0, 1.0)  # main's skill makes every reversal right
    assert main.delta == 1.0 and main.delta_ci95[0] > 0 and main.ci95[0] <= main.mean <= main.ci95[1]
    assert arms["self-written"].delta == 0.0 and arms["self-written"].skills == ["read-carefully"]
    curated = next(arm for name, arm in arms.items() if name.startswith("curated:"))
    assert curated.mean == 1.0 and curated.skills == ["spell"]
    assert (main.pass_at_1, main.pass_hat_k, none.pass_hat_k) == (1.0, 1.0, 0.0)
    assert (main.tokens_per_task, main.cost_per_task) == (15.0, 0.0)  # one call of 10 + 5 tokens a task, free
    assert ws.read_files("uplift/self-written", "skills")  # kept so it can be read


def test_the_skill_that_makes_answers_right_has_positive_leave_one_out_value(measured):
    ws, result = measured
    values = {value.skill: value for value in result.per_skill}
    assert values["spell-letters"].marginal == 1.0 and values["spell-letters"].ci95[0] > 0
    assert values["useless-hint"].marginal == 0.0 and values["useless-hint"].retire
    assert values["spell-letters"].tokens > 0 and not values["spell-letters"].retire
    assert values["spell-letters"].loads is None  # the built-in agent is given every skill: nothing to count
    assert values["spell-letters"].loading is SkillLoading.ALWAYS
    assert values["spell-letters"].trigger_text() == "always loaded" and not values["spell-letters"].rarely_loaded
    assert retire_candidates(ws) == ["useless-hint"]


def test_uplift_is_recorded_counted_as_a_look_at_test_and_reported(measured):
    ws, result = measured
    assert recorded_uplift(ws) == result
    assert result.test_look == 1 and api.status(ws).test_looks == 1
    page = render_report(report_data(ws), "ws")
    assert 'id="uplift"' in page and "spell-letters" in page


def test_an_unknown_arm_is_refused_in_one_line(tmp_path):
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/scripted", api_base=UNUSED_SERVER)
    with pytest.raises(WikiskillError, match="unknown uplift arm 'best'"):
        api.uplift(ws, "test", 1, ["best"])
    assert api.status(ws).test_looks == 0


def test_the_cli_prints_the_arms_as_json_from_the_scripted_server(measured):
    ws, _ = measured
    with FakeOpenAIServer(WritesItsOwn()) as server:
        args = [
            "-C",
            str(ws.root),
            "uplift",
            "--split",
            "val",
            "--arms",
            "main",
            "--json",
            "--api-base",
            server.base_url,
        ]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [arm["arm"] for arm in data["arms"]] == ["none", "main"]
    assert {"arm", "mean", "ci95", "delta", "delta_ci95", "tokens_per_task"} <= set(data["arms"][0])
    assert {"skill", "marginal", "ci95", "tokens"} <= set(data["per_skill"][0])
    assert api.status(ws).test_looks == 1  # val is no look at test


def test_the_proposer_is_shown_the_retire_candidates_and_a_create_past_max_tokens_is_refused(measured):
    from inprocess import evolve_scripted
    from scripted import create
    from workspaces import edit_config, gate_of

    ws, _ = measured
    edit_config(ws, **{"skills.max_tokens": 60})
    prompts: list[str] = []

    class Recording(ScriptedWorld):
        def propose(self, messages):
            prompts.append(messages[1]["content"])
            return super().propose(messages)

    evolve_scripted(ws, rounds=1, world=Recording(proposals={1: create("another-skill", SPELL)}))
    assert "candidates to retire\n- useless-hint" in prompts[0] and "at most 60 tokens" in prompts[0]
    gate = gate_of(ws, 1)
    assert gate.meta.decision == Decision.INVALID
    assert (
        "past skills.max_tokens 60: retire a skill first (no value shown by uplift: useless-hint)"
        in ws.body(gate.sha) + gate.subject
    )


def test_a_curated_folder_is_one_skill_or_a_folder_of_skills_and_anything_else_is_refused(tmp_path):
    from wikiskill.history.uplift import curated_files

    one = tmp_path / "spell"
    one.mkdir()
    (one / "SKILL.md").write_text(skill_md("spell", SPELL))
    assert list(curated_files(one)) == ["spell/SKILL.md"]
    assert list(curated_files(tmp_path)) == ["spell/SKILL.md"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(WikiskillError, match="holds no <name>/SKILL.md"):
        curated_files(tmp_path / "empty")
    with pytest.raises(WikiskillError, match="is not a folder"):
        curated_files(tmp_path / "missing")


def test_a_curated_folder_leaves_out_hidden_files_and_reads_bytes_that_are_not_utf8_as_replacements(tmp_path):
    from wikiskill.history.uplift import curated_files

    one = tmp_path / "spell"
    one.mkdir()
    (one / "SKILL.md").write_text(skill_md("spell", SPELL))
    (one / ".draft.md").write_text("not ready\n")
    (one / "table.txt").write_bytes(b"caf\xe9\n")
    files = curated_files(one)
    assert sorted(files) == ["spell/SKILL.md", "spell/table.txt"] and files["spell/table.txt"] == "caf\ufffd\n"


def test_an_arm_s_branch_and_a_self_written_skill_s_folder_are_slugs_of_their_names():
    from wikiskill.history.uplift import _folder_name, arm_branch

    assert arm_branch("curated:/tmp/My Skills/") == "uplift/curated-tmp-my-skills"
    assert _folder_name("--Read Carefully!") == "read-carefully" and _folder_name("!!!") == "skill"


def test_the_raw_arm_offers_main_s_solved_train_tasks_as_examples(tmp_path):
    from inprocess import evolve_scripted, scripted_workspace

    ws = scripted_workspace(tmp_path / "ws")
    model = WorldModel(ScriptedWorld())
    options = RunOptions(model_factory=lambda role: model)
    with pytest.raises(WikiskillError, match="the raw arm needs solved train tasks"):
        api.uplift(ws, "val", 1, ["raw"], options)
    evolve_scripted(ws, rounds=1)
    result = api.uplift(ws, "val", 1, ["raw"], options)
    raw = next(arm for arm in result.arms if arm.arm == "raw")
    assert raw.skills == ["solved-examples"] and raw.ci95[0] <= raw.mean <= raw.ci95[1]
    examples = ws.read_file("uplift/raw", "skills/solved-examples/SKILL.md")
    assert "Task: How many times does the letter" in examples and "Answer: " in examples


def test_uplift_on_the_offline_default_leaves_out_the_self_written_arm_it_cannot_write(tmp_path):
    ws = api.init_workspace(tmp_path / "ws", benchmark="textworld-cooking", model="offline", train=2, val=2)
    out = CliRunner().invoke(app, ["-C", str(ws.root), "uplift", "--split", "val", "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert [arm["arm"] for arm in result["arms"]] == ["none", "main"]
    assert result["not_made"]["self-written"].startswith("the proposer is offline: it has no model to write skills")
    skills = sorted(skill["skill"] for skill in result["per_skill"])  # the template's skills/.gitkeep is no skill
    assert skills == sorted(path.name for path in (ws.root / "skills").iterdir() if (path / "SKILL.md").is_file())
    names = CliRunner().invoke(app, ["-C", str(ws.root), "uplift", "--split", "val"], env={"COLUMNS": "80"})
    assert names.exit_code == 0 and "…" not in names.output, names.output
    assert "arm self-written: not made: the proposer is offline" in names.output
    with pytest.raises(WikiskillError, match="the self-written arm needs a proposer model"):
        api.uplift(ws, "val", 1, ["self-written"])


def test_a_second_uplift_reads_its_arms_and_self_written_skills_back_until_the_wiki_changes(measured, tmp_path):
    ws, _ = measured
    shutil.copytree(ws.root, tmp_path / "copy", symlinks=True)
    copy = api.open_workspace(tmp_path / "copy")
    branches = ["uplift/main", "uplift/self-written", "uplift/without-spell-letters"]
    world = WritesNothing()
    model = WorldModel(world)
    options = RunOptions(model_factory=lambda role: model)
    api.uplift(copy, "val", 1, ["main", "self-written"], options)  # main's wiki as the tests before left it
    heads = {branch: copy.head(branch) for branch in branches}
    again = api.uplift(copy, "val", 1, ["main", "self-written"], options)
    assert world.asked == 0 and not again.not_made
    assert next(arm for arm in again.arms if arm.arm == "self-written").skills == ["read-carefully"]
    assert {branch: copy.head(branch) for branch in branches} == heads
    copy.commit({"wiki/notes.md": "# Notes\n"}, format_message("human: a wiki page", {"Round": 0, "Step": "human"}))
    api.uplift(copy, "val", 1, ["main", "self-written"], options)
    assert all(copy.head(branch) != heads[branch] for branch in branches)
    assert copy.tree_id("uplift/main", "wiki") == copy.tree_id("main", "wiki")
    arm = copy.log("uplift/main")[0]
    assert arm.subject == "uplift arm main: 2 skill(s)" and (arm.meta.step, arm.meta.cost_usd) == (Step.UPLIFT, 0.0)
