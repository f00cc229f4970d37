"""`wikiskill export-trajectories`: every kind of trajectory wikiskill records written as ATIF v1.8,
validated by the `atif` package's models, and a round's trajectories read back by `ingest --format
atif` as the same steps the maintainer reads."""

import json

import atif
from typer.testing import CliRunner

from inprocess import evolve_scripted, scripted_workspace
from wikiskill.benchmarks.base import BenchmarkKind
from wikiskill.cli import app
from wikiskill.integrations.ingest import read_ingested
from wikiskill.store.traces import (
    SESSION,
    FileEdit,
    Outcome,
    Provenance,
    TraceStep,
    Trajectory,
    Usage,
    infra_trajectory,
)
from wikiskill.store.workspace import MAIN, format_message
from workspaces import edit_config


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def every_kind() -> list[Trajectory]:
    """One trajectory of each kind wikiskill records: the built-in agent on a QA task, on a
    tool-use task and in a game; a Python runner's or a Harbor container's workdir task; a CLI
    agent's transcript with the skills it loaded; an infrastructure failure; an ingested session."""
    usage = Usage(calls=2, prompt_tokens=300, completion_tokens=40, cost_usd=0.001, cached_tokens=100)
    return [
        Trajectory(
            task_id="qa-01",
            split="train",
            kind=BenchmarkKind.QA,
            question="Write 'stone' backwards.",
            messages=[
                {"role": "system", "content": "Answer in <answer> tags."},
                {"role": "user", "content": "Write 'stone' backwards."},
                {"role": "assistant", "content": "Let me think. <answer>enots</answer>"},
            ],
            prediction="enots",
            expected="enots",
            score=1.0,
            usage=usage,
            skills=["spell-letters"],
        ),
        Trajectory(
            task_id="tools-01",
            split="train",
            kind=BenchmarkKind.TOOL_USE,
            question="Book the 9:00 train to Lyon.",
            messages=[
                {"role": "user", "content": "Book the 9:00 train to Lyon."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("c1", "search", {"to": "Lyon"}), call("c2", "calendar", {})],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "TGV 6601 at 09:00"},
                {"role": "tool", "tool_call_id": "c2", "content": "free until noon"},
                {"role": "assistant", "content": "", "tool_calls": [call("c3", "book", {"train": "TGV 6601"})]},
                {"role": "tool", "tool_call_id": "c3", "content": "booked"},
                {"role": "assistant", "content": "Booked TGV 6601."},
            ],
            score=1.0,
        ),
        Trajectory(
            task_id="game-01",
            split="train",
            kind=BenchmarkKind.INTERACTIVE,
            question="Cook the meal in the kitchen.",
            steps=[
                TraceStep(action="go north", observation="You are in the kitchen.", score=0.0),
                TraceStep(action="take knife", observation="Taken.", score=0.25, note="a scored item"),
                TraceStep(action="eat knife", observation="You cannot eat that.", score=0.25),
            ],
            score=0.25,
            won=False,
            lost=True,
        ),
        Trajectory(
            task_id="fix-01",
            split="train",
            kind=BenchmarkKind.WORKDIR,
            question="Make tests/test_slug.py pass.",
            messages=[
                {"role": "user", "content": "Make tests/test_slug.py pass."},
                {"role": "assistant", "content": "", "tool_calls": [call("b1", "bash", {"command": "pytest -q"})]},
                {"role": "tool", "tool_call_id": "b1", "content": "1 failed"},
                {"role": "assistant", "content": "Fixed the regex in slug.py."},
            ],
            edits=[FileEdit(path="slug.py", diff="-a\n+b\n")],
            feedback="test_slug_keeps_digits failed: 'a1' became 'a'",
            score=0.0,
        ),
        Trajectory(
            task_id="cli-01",
            split="train",
            kind=BenchmarkKind.WORKDIR,
            question="Summarise notes.md.",
            messages=[
                {"role": "user", "content": "Summarise notes.md."},
                {
                    "role": "assistant",
                    "content": "(thinking) a skill applies",
                    "tool_calls": [call("toolu_1", "Skill", {"skill": "summaries"})],
                },
                {"role": "tool", "tool_call_id": "toolu_1", "content": "# summaries\nKeep it short."},
                {"role": "assistant", "content": "Done: three bullet points."},
            ],
            skills=["summaries", "spell-letters"],
            skills_loaded=["summaries"],
            score=1.0,
        ),
        infra_trajectory("broken-01", "train", BenchmarkKind.WORKDIR, "Build the image.", "image build failed"),
        Trajectory(
            task_id="session-1a2b3c",
            split="ingested",
            kind=SESSION,
            question="Why does CI fail?",
            messages=[
                {"role": "user", "content": "Why does CI fail?"},
                {"role": "assistant", "content": "A float rounding; use Decimal."},
            ],
            prediction="A float rounding; use Decimal.",
            provenance=Provenance(format="claude-code", file="7c0e.jsonl", outcome=Outcome.FAILURE),
        ),
    ]


def with_round_of(ws, trajectories: list[Trajectory]) -> None:
    ws.commit(
        {f"raw/r001/{t.split}/{t.task_id}.json": t.to_json() for t in trajectories},
        format_message("r001 rollout: train", {"Round": 1, "Step": "rollout"}),
    )


def export(ws, out, *more: str):
    return CliRunner().invoke(app, ["-C", str(ws.root), "export-trajectories", "1", "--out", str(out), *more])


def test_every_kind_of_trajectory_is_written_as_atif_that_the_maintained_model_validates(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    kinds = every_kind()
    with_round_of(ws, kinds)
    result = export(ws, tmp_path / "atif")
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "atif").rglob("*.json"))
    assert [f"{path.parent.name}/{path.stem}" for path in files] == sorted(f"{t.split}/{t.task_id}" for t in kinds)
    documents = {path.stem: atif.Trajectory.model_validate_json(path.read_text()) for path in files}
    assert {doc.schema_version for doc in documents.values()} == {"ATIF-v1.8"}

    tools = documents["tools-01"].steps
    assert [step.source for step in tools] == ["user", "agent", "agent", "agent"]
    assert [r.source_call_id for r in tools[1].observation.results] == ["c1", "c2"]
    assert tools[1].tool_calls[0].arguments == {"to": "Lyon"}
    game = documents["game-01"]
    assert [step.message for step in game.steps[1:]] == ["go north", "take knife", "eat knife"]
    assert game.steps[2].observation.results[0].content == "Taken." and game.extra["wikiskill"]["lost"] is True
    qa = documents["qa-01"]
    assert qa.final_metrics.total_prompt_tokens == 300 and qa.final_metrics.total_cached_tokens == 100
    assert qa.extra["wikiskill"]["expected"] == "enots" and qa.extra["wikiskill"]["skills"] == ["spell-letters"]
    assert documents["cli-01"].extra["wikiskill"]["skills_loaded"] == ["summaries"]
    assert documents["broken-01"].extra["wikiskill"]["failure"] == "infra"
    assert documents["session-1a2b3c"].notes == "ingested claude-code session 7c0e.jsonl"

    only = export(ws, tmp_path / "ingested-only", "--split", "ingested")
    assert only.exit_code == 0 and [p.name for p in (tmp_path / "ingested-only").rglob("*.json")] == [
        "session-1a2b3c.json"
    ]


def test_a_round_without_trajectories_is_refused_in_one_line_and_nothing_is_written(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    result = export(ws, tmp_path / "atif")
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert "round 1 has no train or ingested trajectory on main" in result.output
    assert not (tmp_path / "atif").exists()


def body(trajectory: Trajectory) -> str:
    """What the maintainer and proposer read of a trace below its header (task id, score, source)."""
    return trajectory.render().split("\n\n", 1)[1]


def test_a_rounds_trajectories_read_back_from_atif_give_the_maintainer_the_same_steps(tmp_path):
    source = scripted_workspace(tmp_path / "source")
    evolve_scripted(source, rounds=1)
    handmade = [t for t in every_kind() if t.split == "train" and not t.infra]
    source.commit(
        {f"raw/r001/train/{t.task_id}.json": t.to_json() for t in handmade},
        format_message("r001 more train traces", {"Round": 1, "Step": "rollout"}),
    )
    originals = {
        t.task_id: t
        for t in (
            Trajectory.model_validate_json(text)
            for path, text in source.read_files(MAIN, "raw/r001/train").items()
            if path.endswith(".json")
        )
    }
    assert {t.kind for t in originals.values()} == {"qa", "tool_use", "interactive", "workdir"}
    assert export(source, tmp_path / "atif", "--split", "train").exit_code == 0

    target = scripted_workspace(tmp_path / "target")
    edit_config(target, **{"sampling.max_failures": 50, "sampling.max_successes": 50})
    files = [str(path) for path in sorted((tmp_path / "atif" / "train").glob("*.json"))]
    result = CliRunner().invoke(app, ["-C", str(target.root), "ingest", *files, "--format", "atif"])
    assert result.exit_code == 0, result.output
    ingested = {t.provenance.file.removesuffix(".json"): t for t in read_ingested(target, 1)}
    assert ingested.keys() == originals.keys()
    for task_id, original in originals.items():
        assert body(ingested[task_id]) == body(original), task_id
        assert ingested[task_id].kind == original.kind and ingested[task_id].skills == original.skills

    evolve_scripted(target, rounds=1)
    prompt = json.loads(target.read_file(MAIN, "raw/r001/maintainer.json"))["messages"][1]["content"]
    for task_id, original in originals.items():
        assert body(original) in prompt, task_id
