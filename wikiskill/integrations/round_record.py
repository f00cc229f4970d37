"""What a round recorded in git, as an experiment tracker's params, metrics, tags and artifacts.

Everything is read back from the round's commits (the trailers, its outcomes files, the
skill-impact entry of its gate commit), so a tracker can log a round at any time after it closed,
in this run or a later one, and log the same values each time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..core.config import Config
from ..core.redact import scrub
from ..knowledge.wiki import IMPACT
from ..store.rounds import REJECTED_PREFIX, round_label, round_state
from ..store.trailers import Step
from ..store.workspace import MAIN, Commit, Workspace

MAX_PARAM_CHARS = 6000
"""MLflow's limit on a param's value."""


@dataclass
class Record:
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)
    """File name -> text."""


def workspace_id(ws: Workspace) -> str:
    """The id of the workspace's evolution: its first commit, the same in every clone."""
    return ws.log(MAIN)[-1].sha


def settings_params(config: Config) -> dict[str, str]:
    """Every setting as a dotted name (`gate.policy`) and its value, secrets scrubbed."""
    flat: dict[str, str] = {}

    def walk(prefix: str, value: object) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}{key}.", inner)
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            flat[prefix.rstrip(".")] = scrub(text)[:MAX_PARAM_CHARS]

    walk("", config.model_dump(mode="json"))
    return flat


def baseline_record(ws: Workspace) -> Record | None:
    """Main's skills before round 1: the first incumbent's score and fingerprint."""
    baseline = next((c for c in reversed(ws.log(MAIN)) if c.meta.step == Step.BASELINE and c.meta.round == 0), None)
    if baseline is None:
        return None
    record = Record()
    meta = baseline.meta
    record.params = _present({"fingerprint": meta.fingerprint, "eval_setup": meta.setup, "skills_id": meta.skills_id})
    if meta.score is not None:
        record.metrics["val_incumbent"] = meta.score
    return record


def round_record(ws: Workspace, number: int) -> Record | None:
    """Round `number` once it closed (its gate commit is on main); None before."""
    gate = round_state(ws, number).gate
    if gate is None:
        return None
    commits = round_commits(ws, number, gate)
    record = Record()
    meta = gate.meta
    rollout = next((c for c in commits if c.meta.step == Step.ROLLOUT), None)
    incumbent = next((c for c in commits if c.meta.step in (Step.INCUMBENT, Step.BASELINE)), None)
    validation = next((c for c in commits if c.meta.step == Step.VALIDATE), None)
    record.params = _present(
        {
            "fingerprint": meta.fingerprint or (validation.meta.fingerprint if validation else None),
            "incumbent_fingerprint": meta.incumbent_fingerprint or (incumbent.meta.fingerprint if incumbent else None),
            "eval_setup": meta.setup or (validation.meta.setup if validation else None),
        }
    )
    record.tags = _present(
        {"decision": meta.decision, "action": meta.action, "skill": meta.skill, "policy": meta.policy}
    )
    record.metrics = _scores(rollout, gate) | _verdict_counts(gate) | _spend(commits)
    if validation is not None and validation.meta.results:
        record.metrics |= _outcome_counts(ws.read_file(validation.sha, validation.meta.results) or "")
    record.artifacts = _artifacts(ws, number, gate, commits)
    return record


def round_commits(ws: Workspace, number: int, gate: Commit) -> list[Commit]:
    """Every commit of round `number`, newest first: on main, on its merged branch, or under the
    `rejected/` tag its candidate was kept at."""
    label = round_label(number)
    rejected = ws.refs(f"refs/tags/{REJECTED_PREFIX}")
    tips = [gate.sha] + [sha for name, sha in sorted(rejected.items()) if name.startswith(f"{REJECTED_PREFIX}{label}-")]
    seen: dict[str, Commit] = {}
    for tip in tips:
        for commit in ws.log(tip, first_parent=False):
            if commit.meta.round == number and commit.sha not in seen:
                seen[commit.sha] = commit
    return list(seen.values())


def _present(values: dict[str, object]) -> dict[str, str]:
    """The values that are set, as text (an enum by its value)."""
    return {key: str(getattr(value, "value", value)) for key, value in values.items() if value}


def _scores(rollout: Commit | None, gate: Commit) -> dict[str, float]:
    values = {
        "train_score": rollout.meta.score if rollout else None,
        "val_incumbent": gate.meta.incumbent,
        "val_candidate": gate.meta.score,
    }
    return {key: value for key, value in values.items() if value is not None}


def _verdict_counts(gate: Commit) -> dict[str, float]:
    """The gate's per-task verdicts: tasks compared, fixed, broken, unchanged, left out as infra."""
    meta = gate.meta
    if meta.tasks is None:
        return {}
    fixed, broken = meta.fixed or 0, meta.broken or 0
    return {
        "val_tasks": meta.tasks,
        "val_tasks_fixed": fixed,
        "val_tasks_broken": broken,
        "val_tasks_unchanged": meta.tasks - fixed - broken,
        "val_tasks_infra": meta.infra or 0,
    }


def _outcome_counts(text: str) -> dict[str, float]:
    """The candidate's per-task outcomes on val (its `val.jsonl`): solved, not solved, infra."""
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    infra = sum(1 for row in rows if row.get("failure") == "infra")
    solved = sum(1 for row in rows if row.get("failure") != "infra" and row.get("success"))
    return {"val_candidate_solved": solved, "val_candidate_unsolved": len(rows) - infra - solved}


def _spend(commits: list[Commit]) -> dict[str, float]:
    """Cost and tokens of the round, in all and per role (`cost_usd/agent`)."""
    spend: dict[str, float] = {"cost_usd": 0.0, "tokens": 0}
    for commit in commits:
        meta = commit.meta
        spend["cost_usd"] += meta.cost_usd or 0.0
        spend["tokens"] += meta.tokens or 0
        for role, cost in meta.role_costs.items():
            spend[f"cost_usd/{role}"] = spend.get(f"cost_usd/{role}", 0.0) + cost
        for role, tokens in meta.role_tokens.items():
            spend[f"tokens/{role}"] = spend.get(f"tokens/{role}", 0) + tokens
    return spend


def _artifacts(ws: Workspace, number: int, gate: Commit, commits: list[Commit]) -> dict[str, str]:
    artifacts = {}
    proposal = next((c for c in commits if c.meta.step == Step.PROPOSE), None)
    if proposal is not None and proposal.parents:
        diff = ws.diff(proposal.parents[0], proposal.sha, "skills")
        if diff.strip():
            artifacts["proposal.diff"] = diff
    entry = impact_entry(ws.read_file(gate.sha, IMPACT) or "", number)
    if entry:
        artifacts["skill-impact.md"] = entry
    return artifacts


def impact_entry(impact: str, number: int) -> str:
    """Round `number`'s entry of wiki/skill-impact.md (its `## rNNN · ...` section)."""
    heading = f"## {round_label(number)} ·"
    sections = impact.split("\n## ")
    for index, section in enumerate(sections):
        text = section if index == 0 else f"## {section}"
        if text.startswith(heading):
            return text.rstrip() + "\n"
    return ""
