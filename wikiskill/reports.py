"""Read-only views of a workspace for `status` and `log`, computed from git trailers alone
(these commands never import litellm, datasets or textworld)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from .config import load_config
from .history import completed_rounds, incumbent_score
from .search import tokens
from .skills import load_skills
from .skillsblock import render_skills
from .workspace import MAIN, Workspace


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
    cost_by_role: dict[str, float]


@dataclass
class RoundRow:
    round: int
    train: float | None = None
    action: str = ""
    skill: str = ""
    val: float | None = None
    incumbent: float | None = None
    decision: str = ""
    cost_usd: float = 0.0
    tokens: int = 0


def status(ws: Workspace) -> Status:
    config = load_config(ws.root)
    every = ws.log("--all", first_parent=False)
    main_log = ws.log(MAIN)
    skills = load_skills(ws.read_files(MAIN, "skills"))
    return Status(
        benchmark=config.benchmark,
        model=config.model,
        rounds=completed_rounds(ws),
        incumbent=incumbent_score(ws, main_log),
        skills=[skill.name for skill in skills],
        skills_tokens=tokens(render_skills(skills, config.skills)),
        wiki_pages=sum(path.endswith(".md") for path in ws.list_paths(MAIN, "wiki/patterns")),
        cost_usd=sum(float(c.trailer("Cost-USD") or 0) for c in every),
        tokens=sum(int(c.trailer("Tokens") or 0) for c in every),
        cost_by_role=_cost_by_role(every),
    )


_ROLE_COST = re.compile(r"Wikiskill-Cost-([A-Za-z]+)-USD")


def _cost_by_role(commits: list) -> dict[str, float]:
    """USD per role from the `Cost-<Role>-USD` trailers."""
    costs: dict[str, float] = defaultdict(float)
    for commit in commits:
        for key, value in commit.trailers.items():
            match = _ROLE_COST.fullmatch(key)
            if match:
                costs[match.group(1).lower()] += float(value or 0)
    return dict(costs)


def round_rows(ws: Workspace) -> list[RoundRow]:
    """One row per round: train score, candidate, val score, decision and cost."""
    rows: dict[int, RoundRow] = {}
    costs: dict[int, float] = defaultdict(float)
    tokens: dict[int, int] = defaultdict(int)
    for commit in ws.log("--all", first_parent=False):
        number = commit.trailer("Round")
        if number is None or not number.isdigit() or int(number) == 0:
            continue
        costs[int(number)] += float(commit.trailer("Cost-USD") or 0)
        tokens[int(number)] += int(commit.trailer("Tokens") or 0)
    for commit in reversed(ws.log(MAIN)):
        number = commit.trailer("Round")
        if number is None or not number.isdigit() or int(number) == 0:
            continue
        row = rows.setdefault(int(number), RoundRow(int(number)))
        step = commit.trailer("Step")
        if step == "rollout":
            row.train = _float(commit.trailer("Score"))
        elif step == "gate":
            row.action = commit.trailer("Action") or ""
            row.skill = commit.trailer("Skill") or ""
            row.val = _float(commit.trailer("Score"))
            row.incumbent = _float(commit.trailer("Incumbent"))
            row.decision = commit.trailer("Decision") or ""
    for number, row in rows.items():
        row.cost_usd = costs[number]
        row.tokens = tokens[number]
    return [rows[number] for number in sorted(rows)]


def _float(value: str | None) -> float | None:
    return float(value) if value not in (None, "") else None
