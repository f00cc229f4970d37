"""The errors a user can cause. The CLI prints them as one line and exits non-zero."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from pydantic import ValidationError

E = TypeVar("E", bound=Enum)


class WikiskillError(Exception):
    """Base of every error that comes from input, configuration or workspace state."""


def first_problem(exc: ValidationError, whole: str = "") -> str:
    """`where: why` of a validation's first error, `where` its dotted location (`whole` when the
    error is of the whole value): one line for a message that names the file."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or whole
    return f"{where}: {first['msg']}"


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong in wikiskill.yaml: what (`setting: why`), and on which line (from 1) when
    the file tells."""

    text: str
    line: int | None = None


class ConfigError(WikiskillError):
    """wikiskill.yaml or a command-line option is invalid; `problems` holds each thing found wrong
    in one reading of the file (empty for an error that is not about a file's settings)."""

    def __init__(self, message: str, problems: Sequence[ConfigProblem] = ()):
        super().__init__(message)
        self.problems = tuple(problems)

    @classmethod
    def found(cls, source: str, problems: Sequence[ConfigProblem]) -> ConfigError:
        """Every problem of `source` in one line, each after its line: `wikiskill.yaml, line 3:
        concurrency: ...; line 9: gate.policy: ...`."""
        placed = [f"line {problem.line}: {problem.text}" if problem.line else problem.text for problem in problems]
        separator = ": " if problems[0].line is None else ", "
        return cls(source + separator + "; ".join(placed), problems)


class WorkspaceError(WikiskillError):
    """The workspace is missing, locked, dirty or otherwise not usable as asked."""


class SchemaError(WorkspaceError):
    """A commit's `Wikiskill-*` trailers are not in a schema this wikiskill reads (a newer
    wikiskill wrote them, or a value or key is not one it knows)."""


class TranscriptError(WikiskillError):
    """An agent session transcript given to `ingest` is unreadable or not in its format."""


class BenchmarkError(WikiskillError):
    """A benchmark name or its data cannot be loaded."""


class ModelError(WikiskillError):
    """A model call failed for good (after retries), or its output could not be used."""


class ProviderUnavailable(ModelError):
    """A transient provider failure (timeouts, connection errors, 5xx, rate limits) that outlasted
    the retries: the provider is down for now, which says nothing about the skills under test."""


class ContextOverflow(ModelError):
    """A required part of a request (e.g. a system prompt) cannot fit the model's context window."""


class SkillsNotWritten(WikiskillError):
    """The self-written arm could not be made: no model for it, its call failed, or no reply held
    skills after one repair. `reason` says which; the other arms can still be scored."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class BudgetExceeded(WikiskillError):
    """A configured spending or call budget is reached; the run stops cleanly and can resume."""


class ProposalError(WikiskillError):
    """A skill proposal is invalid; the reason is recorded in skill-impact.md."""


class InfrastructureError(WikiskillError):
    """The machinery around a task failed, not the agent: an image that will not build, a container
    that will not start, a scorer or verifier that crashed or wrote no reward. Such a task is
    recorded as `infra` with this reason, retried `infra.retries` times, and never scored."""


class ValidationIndecisive(WikiskillError):
    """A candidate's validation could not complete (the provider failed, a budget stopped it):
    recorded as indecisive, never merged, retried by the next `evolve`."""


def choice(kind: type[E], value: str, what: str) -> E:
    """`value` as a member of the enum `kind`, else a one-line error that lists the choices."""
    try:
        return kind(value)
    except ValueError:
        values = [str(member.value) for member in kind]
        hint = did_you_mean(value, values)
        listed = f"{', '.join(values[:-1])} or {values[-1]}" if len(values) > 1 else values[0]
        raise WikiskillError(f"unknown {what} {value!r}{hint}: use {listed}") from None


def did_you_mean(value: str, names: Iterable[str]) -> str:
    """` (did you mean 'NAME'?)` for the name nearest to a mistyped `value`, or nothing when none is near."""
    nearest = difflib.get_close_matches(value, list(names), n=1)
    return f" (did you mean {nearest[0]!r}?)" if nearest else ""
