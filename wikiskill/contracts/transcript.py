"""A role's conversation as data, kept under raw/rNNN/ so a person can see why a round went as it
did: every message, each turn's parsed tool calls and their results, errors, notes and tokens."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..core.redact import scrub
from ..roles.settings import Role
from ..store.traces import Usage


class TranscriptCall(BaseModel):
    name: str
    arguments: object = None
    """As the model sent them (a JSON object when the call was well formed)."""
    protocol: str
    """`native`, `text` for a call parsed from the reply's text, or `offline` (no model)."""
    result: str = ""
    """What the role answered, cut to a line or two (the full text is in `messages`)."""


class TranscriptTurn(BaseModel):
    turn: int
    content: str | None = None
    calls: list[TranscriptCall] = Field(default_factory=list)
    error: str | None = None
    """Why the reply could not be used, as told to the model."""
    notes: list[str] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    """Of `prompt_tokens`, those the provider read from its prompt cache."""


class Transcript(BaseModel):
    role: Role
    turns: list[TranscriptTurn] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    outcome: object = None
    """The parsed result (a proposal, the maintainer's output), or None."""
    error: str | None = None
    """Why the role produced no usable result."""

    def add_turn(self, content: str | None, usage: Usage, notes: list[str]) -> TranscriptTurn:
        turn = TranscriptTurn(
            turn=len(self.turns) + 1,
            content=content,
            notes=list(notes),
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
        )
        self.turns.append(turn)
        return turn

    @property
    def invalid_outputs(self) -> int:
        return sum(1 for turn in self.turns if turn.error)

    def to_json(self) -> str:
        """The transcript as JSON with every secret value scrubbed."""
        return scrub(self.model_dump_json(indent=1))
