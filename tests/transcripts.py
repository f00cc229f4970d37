"""The real agent sessions in tests/sessions/ (a Claude Code JSONL transcript and OpenAI chat
messages) and the API key the Claude Code session leaked."""

from pathlib import Path

SESSIONS = Path(__file__).parent / "sessions"
CLAUDE = SESSIONS / "7c0e4a52-91d3-4b7e-a6f4-2f3c9d8e1b60.jsonl"
OPENAI = SESSIONS / "openai-order-4417.json"
LEAKED_KEY = "inv-live-9f8e7d6c5b4a39281706"  # what `cat .env` printed in the Claude Code session
