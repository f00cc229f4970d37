"""The sections of wikiskill.yaml for what the loop learns: how skills reach the task agent
(`skills`) and how the wiki is consolidated (`wiki`). In core's layer: it imports only `core`."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from ..core.errors import ConfigError
from ..core.section import Section


class WikiSettings(Section):
    consolidate_every: int = Field(5, ge=0)
    """Every this many rounds, a `consolidate` step merges duplicate pages and retires stale
    ones; 0 = never."""
    retire_after: int = Field(10, ge=1)
    """A page with no new evidence for this many rounds is retired by consolidation."""
    duplicate_similarity: float = Field(0.6, gt=0, le=1)
    """Consolidation merges two pages of the same kind whose word sets (title, summary, root
    cause, fix) overlap at least this much (Jaccard)."""


class SkillsMode(StrEnum):
    """How skills reach the task agent (`skills.mode`, `wikiskill prompt --mode`, a host's `SkillSet`)."""

    FULL = "full"
    INDEX = "index"
    RETRIEVE = "retrieve"


class SkillsSettings(Section):
    mode: SkillsMode = SkillsMode.FULL
    """How skills reach the task agent: every skill's name, description and body (`full`), names +
    descriptions with bodies on demand through a `load_skill` tool (`index`), or the top-k relevant
    to the task by BM25 (`retrieve`)."""
    top_k: int = Field(3, ge=1)
    """`retrieve` mode: how many skills to include."""
    token_budget: int = Field(4000, ge=100)
    """`retrieve` mode: the most tokens (about 4 characters each) of skill text to include."""
    max_tokens: int | None = Field(None, ge=1)
    """The most tokens (about 4 characters each) the skills block may take: a proposal that would
    grow it past this is refused before validation, so the proposer must retire a skill first
    (skills the last `wikiskill uplift` showed no value for are listed to it as candidates).
    Empty: no bound."""
    leak_run: int = Field(8, ge=0)
    """Held-out text kept out of skills: a proposal whose skill files share a run of this many words
    with a val or test task's question, answer, instructions or hidden test files is `invalid`
    before any val task runs, naming the run; `lint`, `watch` and `ingest` say the same of a
    person's edit or a session (runs the train tasks share, or three or more held-out tasks, are
    templates and left out; interactive suites are not checked). 0: no check."""
    locked: list[str] = []
    """Skills the proposer may not patch or retire (such a proposal is refused before validation)
    and `rollback` reverts only with `--force`; `wikiskill lock NAME` and `unlock NAME` edit it."""

    def with_mode(self, mode: str | None) -> SkillsSettings:
        """These settings in `mode` (any case; None keeps `mode`); ConfigError in one line naming the modes."""
        if mode is None:
            return self
        try:
            chosen = SkillsMode(str(mode).strip().lower())
        except ValueError:
            modes = [member.value for member in SkillsMode]
            raise ConfigError(f"unknown skills mode {mode!r}: use {', '.join(modes[:-1])} or {modes[-1]}") from None
        return self.model_copy(update={"mode": chosen})
