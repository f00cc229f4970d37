"""Read-only views of a workspace for `status` and `log`, computed from git trailers alone
(these commands never import litellm, datasets or textworld)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..knowledge.search import tokens
from ..knowledge.skills import load_skills
from ..knowledge.skillsblock import render_skills
from ..loop.alpha_budget import spends
from ..loop.settings import GateSettings
from ..store.pending import pending_candidates
from ..store.rounds import completed_rounds, incumbent_score
from ..store.settings import load_config
from ..store.trailers import Decision, Step
from ..store.unsound import read_unsound
from ..store.workspace import MAIN, Commit, Workspace
from .test_looks import test_looks


@dataclass
class RoleSpend:
    """What one role's model calls cost, from the per-role trailers."""

    cost_usd: float = 0.0
    tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the provider read from its cache (billed at its cache-read price)."""


@dataclass
class Status:
    benchmark: str
    model: str
    rounds: int
    incumbent: float | None
    skills: list[str]
    skills_tokens: int
    """Tokens (about 4 characters each) of the skills block main's skills put in the agent's prompt."""
    wiki_pages: int
    cost_usd: float
    tokens: int
    by_role: dict[str, RoleSpend]
    pending: list[str] = field(default_factory=list)
    """The candidates waiting for a person's review (`gate.review: human`), `rNNN-<name>` each."""
    alpha_spent: float | None = None
    """`gate.alpha_budget`: how much of the run's family-wise error the gate's verdicts spent."""
    alpha_left: float | None = None
    test_looks: int = 0
    """How many times the sealed test split was scored (`eval --split test`, `uplift`)."""
    unsound: dict[str, str] = field(default_factory=dict)
    """The tasks left out of every split as unsound, with the reason."""


@dataclass
class RoundRow:
    round: int
    train: float | None = None
    action: str = ""
    """The proposal's `Action`, `rollback` for a manual rollback, or empty."""
    skill: str = ""
    val: float | None = None
    incumbent: float | None = None
    decision: str = ""
    """The round's final decision (a manual rollback's: `rolled_back`)."""
    events: list[str] = field(default_factory=list)
    """Every decision the round's gate commits recorded, oldest first (`pending`, then `accepted`
    once a person accepted it)."""
    cost_usd: float = 0.0
    tokens: int = 0

    @property
    def is_rollback(self) -> bool:
        """A manual rollback's row: placed after the round it followed, but no round of its own."""
        return self.action == Step.ROLLBACK

    @property
    def decision_text(self) -> str:
        """The final decision, with the ones it replaced (`pending → accepted`)."""
        return " → ".join(self.events) or self.decision


def status(ws: Workspace) -> Status:
    config = load_config(ws.root)
    every = ws.log("--all", first_parent=False)
    main_log = ws.log(MAIN)
    skills = load_skills(ws.read_files(MAIN, "skills"))
    return Status(
        benchmark=config.benchmark,
        model=config.model,
        rounds=completed_rounds(ws),
        incumbent=incumbent_score(ws, config.agent.wiki_access, main_log),
        skills=[skill.name for skill in skills],
        skills_tokens=tokens(render_skills(skills, config.skills)),
        wiki_pages=sum(path.endswith(".md") for path in ws.read_files(MAIN, "wiki/patterns")),
        cost_usd=sum(c.meta.cost_usd or 0.0 for c in every),
        tokens=sum(c.meta.tokens or 0 for c in every),
        by_role=_by_role(every),
        pending=[item.id for item in pending_candidates(ws)],
        test_looks=test_looks(ws),
        **_budget(ws, config.gate),
        unsound=read_unsound(ws, MAIN),
    )


def _budget(ws: Workspace, settings: GateSettings) -> dict[str, float]:
    if settings.alpha_budget is None:
        return {}
    last = spends(ws)[-1:]
    spent = (last[0].meta.alpha_spent or 0.0) if last else 0.0
    return {"alpha_spent": spent, "alpha_left": max(settings.alpha_budget - spent, 0.0)}


def _by_role(commits: list[Commit]) -> dict[str, RoleSpend]:
    """USD, tokens and cached tokens per role from the per-role trailers."""
    spend: dict[str, RoleSpend] = defaultdict(RoleSpend)
    for commit in commits:
        meta = commit.meta
        for role, cost in meta.role_costs.items():
            spend[role].cost_usd += cost
        for role, count in meta.role_tokens.items():
            spend[role].tokens += count
        for role, cached in meta.role_cached.items():
            spend[role].cached_tokens += cached
    return dict(sorted(spend.items()))


def round_rows(ws: Workspace) -> list[RoundRow]:
    """One row per round, in its final state: train score, candidate, val score, decision (a
    decision a person made later, as on `accept`, updates the round's row) and cost; and one
    row per manual rollback, after the round it followed."""
    rows: dict[int, RoundRow] = {}
    rollbacks: list[RoundRow] = []
    costs: dict[int, float] = defaultdict(float)
    tokens: dict[int, int] = defaultdict(int)
    for commit in ws.log("--all", first_parent=False):
        number = commit.meta.round
        if not number:
            continue
        costs[number] += commit.meta.cost_usd or 0.0
        tokens[number] += commit.meta.tokens or 0
    for commit in reversed(ws.log(MAIN)):
        meta = commit.meta
        if meta.step == Step.ROLLBACK and meta.round is not None:
            rollbacks.append(
                RoundRow(meta.round, action=Step.ROLLBACK, skill=meta.skill or "", decision=Decision.ROLLED_BACK.value)
            )
            continue
        if not meta.round or meta.step not in (Step.ROLLOUT, Step.GATE):
            continue
        row = rows.setdefault(meta.round, RoundRow(meta.round))
        if meta.step == Step.ROLLOUT:
            row.train = meta.score
        else:
            row.action = meta.action or row.action
            row.skill = meta.skill or row.skill
            row.val = row.val if meta.score is None else meta.score
            row.incumbent = row.incumbent if meta.incumbent is None else meta.incumbent
            row.decision = meta.decision.value if meta.decision else ""
            if row.decision and row.decision not in row.events[-1:]:
                row.events.append(row.decision)
    for number, row in rows.items():
        row.cost_usd = costs[number]
        row.tokens = tokens[number]
    return sorted([rows[number] for number in sorted(rows)] + rollbacks, key=lambda row: row.round)
