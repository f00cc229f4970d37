"""The real agent sessions in tests/sessions/ (a Claude Code JSONL transcript and OpenAI chat
messages), the API key the Claude Code session leaked, and `wikiskill tasks from-sessions` run
against a scripted drafting model."""

import json
from pathlib import Path

from typer.testing import CliRunner

from wikiskill.cli import app

SESSIONS = Path(__file__).parent / "sessions"
CLAUDE = SESSIONS / "7c0e4a52-91d3-4b7e-a6f4-2f3c9d8e1b60.jsonl"
OPENAI = SESSIONS / "openai-order-4417.json"
LEAKED_KEY = "inv-live-9f8e7d6c5b4a39281706"  # what `cat .env` printed in the Claude Code session


class Drafter:
    """Drafts a rubric naming the session's last user message, so a test sees it read the whole session."""

    def __init__(self, replies: list[str] | None = None):
        self.replies = replies

    def __call__(self, body: dict) -> str:
        if self.replies is not None:
            return self.replies.pop(0)
        session = body["messages"][1]["content"]
        last_user = session.rpartition("## user\n")[2].splitlines()[0]
        return json.dumps(
            {
                "accepted": f"The user ended with: {last_user}",
                "criteria": ["The result does what the request asks.", f"It respects: {last_user}"],
            }
        )


def draft(args: list[str], cwd: Path, monkeypatch) -> object:
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(app, ["tasks", "from-sessions", *args])
