"""`wikiskill tasks from-sessions`: real sessions become task folders (the user's request as
task.md, a rubric the fake server's model drafts as rubric.md) that stay drafts, marked by
REVIEW.md, until a person reviews them; bad input writes nothing."""

import json
from pathlib import Path

import pytest

from transcripts import CLAUDE, LEAKED_KEY, OPENAI, Drafter, draft
from wikiskill.integrations.session_tasks import REVIEW_FILE
from wikiskill.testing.fakeserver import FakeOpenAIServer


def test_each_session_becomes_a_task_folder_with_its_request_a_drafted_rubric_and_a_review_marker(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("INVOICE_API_KEY", LEAKED_KEY)
    out = tmp_path / "suite"
    with FakeOpenAIServer(Drafter()) as server:
        claude = draft(
            [
                str(CLAUDE),
                "--out",
                str(out),
                "--format",
                "claude-code",
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
            ],
            tmp_path,
            monkeypatch,
        )
        openai = draft(
            [
                str(OPENAI),
                "--out",
                str(out),
                "--format",
                "openai-messages",
                "--split",
                "val",
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
            ],
            tmp_path,
            monkeypatch,
        )
    assert claude.exit_code == 0, claude.output
    assert openai.exit_code == 0, openai.output
    invoice = next((out / "train").iterdir())
    order = next((out / "val").iterdir())
    assert (invoice / "task.md").read_text() == (
        "The invoice total test fails on CI with 10.005 rounding. Please fix it and run the tests.\n"
    )
    assert (order / "task.md").read_text() == "Where is order 4417? The customer says it never arrived.\n"
    assert (order / "rubric.md").read_text() == (
        "A good result:\n\n- The result does what the request asks.\n"
        "- It respects: But the customer has no parcel. Open a carrier "
        "claim.\n"
    )
    review = (order / REVIEW_FILE).read_text()
    assert "openai-order-4417.json" in review and "openai/fake-model" in review
    assert "> The user ended with: But the customer has no parcel." in review
    assert (invoice / REVIEW_FILE).exists()
    assert "\nscorer: judge\n" in (out / "suite.yaml").read_text()
    assert sorted(path.name for path in invoice.iterdir()) == ["REVIEW.md", "rubric.md", "task.md"]
    assert sorted(path.name for path in out.iterdir()) == ["suite.yaml", "train", "val"]  # no staging left
    assert f"drafted {invoice}" in claude.output and "delete its REVIEW.md" in claude.output
    assert len(server.requests) == 2
    assert all(LEAKED_KEY not in json.dumps(body) for body in server.requests)
    assert "INVOICE_API_KEY=" in server.requests[0]["messages"][1]["content"]  # the session, scrubbed, was shown


def test_a_session_drafted_before_is_skipped_without_a_model_call(tmp_path, monkeypatch):
    out = tmp_path / "suite"
    with FakeOpenAIServer(Drafter()) as server:
        flags = [
            "--out",
            str(out),
            "--format",
            "claude-code",
            "--model",
            "openai/fake-model",
            "--api-base",
            server.base_url,
        ]
        first = draft([str(CLAUDE), *flags], tmp_path, monkeypatch)
        (next((out / "train").iterdir()) / REVIEW_FILE).unlink()  # reviewed
        again = draft([str(CLAUDE), *flags], tmp_path, monkeypatch)
    assert first.exit_code == again.exit_code == 0
    assert len(server.requests) == 1 and "skipped" in again.output and "Nothing new to draft." in again.output
    assert not list(out.rglob(REVIEW_FILE))


def broken_claude(tmp_path: Path) -> Path:
    path = tmp_path / "broken.jsonl"
    lines = CLAUDE.read_text().splitlines()
    path.write_text("\n".join(lines[:4] + ['{"type": "assistant", "message": {"role": "assist'] + lines[4:]))
    return path


def only_assistant(tmp_path: Path) -> Path:
    path = tmp_path / "no-request.json"
    path.write_text('[{"role": "assistant", "content": "hello"}]')
    return path


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (broken_claude, ":5: not a JSON line ("),
        (only_assistant, "no user and assistant messages"),
        (lambda tmp_path: tmp_path / "absent.jsonl", "cannot read it"),
    ],
)
def test_a_bad_session_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, make, expected):
    bad = make(tmp_path)
    out = tmp_path / "suite"
    good, session_format = (OPENAI, "openai-messages") if bad.suffix == ".json" else (CLAUDE, "claude-code")
    with FakeOpenAIServer(Drafter()) as server:
        result = draft(
            [
                str(good),
                str(bad),
                "--out",
                str(out),
                "--format",
                session_format,
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
            ],
            tmp_path,
            monkeypatch,
        )
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and expected in result.output
    assert result.output.startswith("error: ") and not out.exists() and not server.requests


def test_a_rubric_that_cannot_be_drafted_after_one_retry_writes_nothing(tmp_path, monkeypatch):
    out = tmp_path / "suite"
    other = tmp_path / "other.json"
    other.write_text(OPENAI.read_text().replace("order 4417", "order 5521"))
    good = json.dumps({"accepted": "ok", "criteria": ["fine"]})
    with FakeOpenAIServer(Drafter([good, "no JSON here", '{"accepted": "x", "criteria": []}'])) as server:
        result = draft(
            [
                str(OPENAI),
                str(other),
                "--out",
                str(out),
                "--format",
                "openai-messages",
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
            ],
            tmp_path,
            monkeypatch,
        )
    assert result.exit_code == 1 and not out.exists()
    assert len(result.output.strip().splitlines()) == 1
    assert "no rubric could be drafted" in result.output and "criteria" in result.output
    assert "Your reply could not be used: no JSON object found" in server.requests[2]["messages"][-1]["content"]
