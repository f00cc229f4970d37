"""`wikiskill ingest --format harbor-job|atif`: the trials of a Harbor job folder (ATIF trajectories
beside their verifiers' rewards) become train experience for the next round, each with its reward
as its outcome; a malformed trial, or one of a task held out, writes nothing."""

import json
from pathlib import Path

import atif
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import git
from inprocess import evolve_scripted, scripted_workspace
from wikiskill.cli import app
from wikiskill.core.errors import TranscriptError
from wikiskill.core.redact import Scrubber
from wikiskill.integrations.atif_in import parse_atif, read_atif
from wikiskill.integrations.harbor_job import read_job
from wikiskill.integrations.ingest import read_ingested
from wikiskill.store.traces import Outcome
from wikiskill.store.workspace import MAIN
from workspaces import edit_config

LEAKED = "hb-live-7Qx2Lm9Zp4Rt8Wv1"


def v14_trajectory() -> dict:
    """An ATIF v1.4 trajectory as Harbor's Terminus wrote them: session_id required, no v1.5+ field."""
    return {
        "schema_version": "ATIF-v1.4",
        "session_id": "0b6c9a1e-terminus",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-5"},
        "steps": [
            {"step_id": 1, "timestamp": "2026-11-02T09:00:00Z", "source": "system", "message": "You are in a shell."},
            {"step_id": 2, "source": "user", "message": "Create greeting.txt containing exactly: hello harbor"},
            {
                "step_id": 3,
                "source": "agent",
                "model_name": "openai/gpt-5",
                "message": "I will write the file with printf.",
                "reasoning_content": "echo adds a newline; printf does not.",
                "tool_calls": [
                    {
                        "tool_call_id": "call_1",
                        "function_name": "bash_command",
                        "arguments": {"keystrokes": "printf 'hello harbor' > greeting.txt\n"},
                    }
                ],
                "observation": {"results": [{"source_call_id": "call_1", "content": "$ "}]},
                "metrics": {"prompt_tokens": 812, "completion_tokens": 40, "cost_usd": 0.0021},
            },
            {
                "step_id": 4,
                "source": "agent",
                "message": "Delegating the check.",
                "observation": {
                    "results": [
                        {
                            "content": f"checked with token {LEAKED}",
                            "subagent_trajectory_ref": [{"session_id": "sub-1"}],
                        }
                    ]
                },
            },
            {"step_id": 5, "source": "agent", "message": "greeting.txt now holds hello harbor."},
        ],
        "final_metrics": {"total_prompt_tokens": 812, "total_completion_tokens": 40, "total_steps": 5},
    }


def v18_trajectory() -> dict:
    """An ATIF v1.8 trajectory with no user step (the task's instruction is in its folder), a
    multimodal observation and v1.7's llm_call_count."""
    return {
        "schema_version": "ATIF-v1.8",
        "session_id": "5f1d-claude-code",
        "trajectory_id": "5f1d-claude-code-root",
        "agent": {"name": "claude-code", "version": "2.1.3", "model_name": "claude-sonnet-4-6"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "Work in /app."},
            {
                "step_id": 2,
                "source": "agent",
                "message": [{"type": "text", "text": "Listing the folder first."}],
                "llm_call_count": 1,
                "tool_calls": [{"tool_call_id": "toolu_1", "function_name": "Bash", "arguments": {"command": "ls"}}],
                "observation": {
                    "results": [
                        {
                            "source_call_id": "toolu_1",
                            "content": [
                                {"type": "text", "text": "notes.md"},
                                {"type": "image", "source": {"media_type": "image/png", "path": "shot.png"}},
                            ],
                        }
                    ]
                },
            },
            {"step_id": 3, "source": "agent", "message": "I wrote the summary to notes.md, in French."},
        ],
    }


def harbor_trial(job: Path, task: str, trajectory: dict, reward_file: str, reward: str, tasks: Path) -> Path:
    """One trial folder as `harbor run` lays it out: config.json, result.json, agent/trajectory.json,
    verifier/reward.*; its task's folder (with instruction.md) under `tasks`."""
    trial = job / f"{task}__Ab3dE9x"
    (trial / "agent").mkdir(parents=True)
    (trial / "verifier").mkdir()
    (trial / "agent" / "trajectory.json").write_text(json.dumps(trajectory, indent=2))
    (trial / "verifier" / reward_file).write_text(reward)
    (trial / "verifier" / "test-stdout.txt").write_text("1 passed\n")
    (tasks / task).mkdir(parents=True)
    (tasks / task / "instruction.md").write_text(f"Summarise notes.md for task {task} in French.\n")
    config = {"task": {"path": str(tasks / task)}, "trial_name": trial.name, "agent": {"name": "x"}}
    (trial / "config.json").write_text(json.dumps(config))
    result = {
        "task_name": task,
        "trial_name": trial.name,
        "trial_uri": trial.as_uri(),
        "task_checksum": "9a1c",
        "config": config,
        "agent_info": {"name": "x", "version": "1"},
        "verifier_result": {
            "rewards": {
                "reward": float(json.loads(reward)["reward"]) if reward_file == "reward.json" else float(reward)
            }
        },
    }
    (trial / "result.json").write_text(json.dumps(result))
    return trial


def harbor_job(root: Path) -> Path:
    """A job folder of two trials: greet-harbor (ATIF v1.4, reward.txt 1) and summarise-notes
    (ATIF v1.8, reward.json 0), beside the job's own config.json and result.json."""
    job, tasks = root / "jobs" / "2026-11-02__09-00-00", root / "tasks"
    job.mkdir(parents=True)
    (job / "config.json").write_text(json.dumps({"job_name": job.name, "n_attempts": 1}))
    (job / "result.json").write_text(json.dumps({"n_total_trials": 2}))
    harbor_trial(job, "greet-harbor", v14_trajectory(), "reward.txt", "1\n", tasks)
    harbor_trial(job, "summarise-notes", v18_trajectory(), "reward.json", '{"reward": 0}', tasks)
    return job


def ingest(ws, *arguments: str):
    return CliRunner().invoke(app, ["-C", str(ws.root), "ingest", *arguments])


def test_a_harbor_jobs_trials_are_read_with_their_rewards_by_the_next_rounds_maintainer(tmp_path, monkeypatch):
    monkeypatch.setenv("HARBOR_API_TOKEN", LEAKED)
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"sampling.max_failures": 20, "sampling.max_successes": 20})
    job = harbor_job(tmp_path)
    result = ingest(ws, str(job), "--format", "harbor-job")
    assert result.exit_code == 0, result.output
    assert "Ingested 2 session(s) as raw/r001/ingested/" in result.output

    greet, notes = sorted(read_ingested(ws, 1), key=lambda t: t.task_id)
    assert greet.task_id.startswith("greet-harbor-") and notes.task_id.startswith("summarise-notes-")
    assert (greet.score, greet.provenance.outcome.value, greet.split) == (1.0, "success", "ingested")
    assert (notes.score, notes.provenance.outcome.value) == (0.0, "failure")
    assert greet.question == "Create greeting.txt containing exactly: hello harbor"  # from its user step
    assert notes.question == "Summarise notes.md for task summarise-notes in French.\n"  # from its task folder
    assert "(thinking) echo adds a newline" in greet.messages[2]["content"]
    assert json.loads(greet.messages[2]["tool_calls"][0]["function"]["arguments"])["keystrokes"].startswith("printf")
    assert greet.messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "$ "}
    assert "(subagent trajectory sub-1)" in greet.messages[5]["content"]
    assert notes.messages[2]["content"] == "notes.md\n[image]"
    assert LEAKED not in git(ws.root, "log", "-p", "--all")
    assert all(LEAKED not in trial.session.trajectory.to_json() for trial in read_job(job, None))  # scrubbed as read

    evolve_scripted(ws, rounds=1)
    maintainer = ws.read_file(MAIN, "raw/r001/maintainer.json")
    prompt = json.loads(maintainer)["messages"][1]["content"]
    for trajectory, score in ((greet, "score: 1.000 | success: True"), (notes, "score: 0.000 | success: False")):
        trace = prompt[prompt.index(f"# Trace {trajectory.task_id} (ingested)") :]
        assert trace.splitlines()[1] == score
        assert f"ingested harbor-job session {Path(trajectory.provenance.file).name}" in trace
    assert "-> bash_command(" in prompt and "-> Bash(" in prompt

    again = ingest(ws, str(job), "--format", "harbor-job")
    assert again.exit_code == 0 and "Nothing new to ingest." in again.output
    assert again.output.count("already ingested") == 2


def broken_json(trial: Path) -> tuple[Path, str]:
    path = trial / "agent" / "trajectory.json"
    path.write_text(path.read_text()[:-40])
    return path, "not valid JSON"


def unknown_version(trial: Path) -> tuple[Path, str]:
    path = trial / "agent" / "trajectory.json"
    path.write_text(path.read_text().replace("ATIF-v1.8", "ATIF-v2.0"))
    return path, "schema_version 'ATIF-v2.0' is not one wikiskill reads"


def user_step_with_tool_calls(trial: Path) -> tuple[Path, str]:
    path = trial / "agent" / "trajectory.json"
    data = json.loads(path.read_text())
    data["steps"][0]["tool_calls"] = []
    path.write_text(json.dumps(data))
    return path, "not valid ATIF-v1.8: steps.0: Value error, Field `tool_calls` is only valid on `source='agent'`"


def steps_out_of_order(trial: Path) -> tuple[Path, str]:
    path = trial / "agent" / "trajectory.json"
    data = json.loads(path.read_text())
    data["steps"][2]["step_id"] = 7
    path.write_text(json.dumps(data))
    return path, "steps[2].step_id=7 is not sequential"


def reward_not_a_number(trial: Path) -> tuple[Path, str]:
    path = trial / "verifier" / "reward.json"
    path.write_text('{"reward": "pass"}')
    return trial / "verifier", "key 'reward' is no number"


@pytest.mark.parametrize(
    "breaks", [broken_json, unknown_version, user_step_with_tool_calls, steps_out_of_order, reward_not_a_number]
)
def test_a_malformed_trial_is_refused_in_one_line_naming_its_file_and_nothing_is_written(tmp_path, breaks):
    ws = scripted_workspace(tmp_path / "ws")
    job = harbor_job(tmp_path)
    path, said = breaks(job / "summarise-notes__Ab3dE9x")
    before = ws.head(MAIN)
    result = ingest(ws, str(job), "--format", "harbor-job")
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert result.output.startswith(f"error: {path}") and said in result.output, result.output
    assert ws.head(MAIN) == before and ws.list_paths(MAIN, "raw") == ["raw/.gitkeep"]


def test_a_trial_of_a_task_in_val_or_test_is_refused_naming_it(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    job = harbor_job(tmp_path)
    trial = harbor_trial(job, "val-03", v18_trajectory(), "reward.txt", "1", tmp_path / "tasks")
    before = ws.head(MAIN)
    result = ingest(ws, str(job), "--format", "harbor-job")
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert result.output.startswith(f"error: {trial}: task 'val-03' is in the suite's val split")
    assert ws.head(MAIN) == before


def test_a_harbor_job_takes_its_outcomes_from_rewards_not_from_the_command_line(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    result = ingest(ws, str(harbor_job(tmp_path)), "--format", "harbor-job", "--outcome", "success")
    assert result.exit_code == 1 and "each trial's outcome is its verifier's reward" in result.output


def test_an_atif_file_is_ingested_with_the_outcome_given(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(v14_trajectory()))
    result = ingest(ws, str(path), "--format", "atif", "--outcome", "success")
    assert result.exit_code == 0, result.output
    (trajectory,) = read_ingested(ws, 1)
    assert trajectory.task_id.startswith("run-") and trajectory.success
    assert trajectory.provenance.format == "atif" and trajectory.prediction == "greeting.txt now holds hello harbor."


def test_a_v1_4_subagent_reference_by_session_id_alone_is_upgraded_to_validate_as_v1_8():
    data = v14_trajectory()
    doc = parse_atif(json.dumps(data), "old.json")
    (ref,) = doc.steps[3].observation.results[0].subagent_trajectory_ref
    assert (ref.trajectory_id, ref.session_id) == ("sub-1", "sub-1")
    with pytest.raises(ValueError, match="must set at least one of"):
        atif.Trajectory.model_validate(data)  # as written, v1.8's model refuses it
    data["schema_version"] = "ATIF-v1.7"  # a v1.7 file is held to the v1.7 rule
    with pytest.raises(TranscriptError, match="old.json: not valid ATIF-v1.7: steps.3.observation.results.0"):
        parse_atif(json.dumps(data), "old.json")


ATIF_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-1, 3) | st.sampled_from(["ATIF-v1.4", "ATIF-v1.8", "agent", "user", ""]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "schema_version",
                    "agent",
                    "name",
                    "version",
                    "steps",
                    "step_id",
                    "source",
                    "message",
                    "extra",
                    "wikiskill",
                    "kind",
                    "score",
                    "observation",
                    "results",
                    "content",
                    "tool_calls",
                    "skills",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=ATIF_VALUES)
def test_any_json_is_an_atif_trajectory_or_one_transcript_error(tmp_path, document):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document))
    try:
        read_atif(path, Outcome.UNKNOWN, Scrubber())
    except TranscriptError as error:
        assert str(path) in str(error) and "\n" not in str(error)


def test_wikiskills_own_fields_that_do_not_read_are_refused_naming_the_file(tmp_path):
    data = v18_trajectory()
    data["steps"].insert(0, {"step_id": 1, "source": "user", "message": "Go."})
    for number, step in enumerate(data["steps"], 1):
        step["step_id"] = number
    data["extra"] = {"wikiskill": {"kind": "interactive"}}
    data["steps"][2]["extra"] = {"wikiskill": {"score": "high"}}
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TranscriptError, match=r"odd.json: extra.wikiskill.score: Input should be a valid number"):
        read_atif(path, Outcome.UNKNOWN, Scrubber())
