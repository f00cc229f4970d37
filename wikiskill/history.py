"""State derived from git: rounds, steps done, the incumbent score, costs. No second source of truth."""

from __future__ import annotations

from dataclasses import dataclass

from .workspace import MAIN, Commit, Workspace

BRANCH_PREFIX = "skill/"
REJECTED_PREFIX = "rejected/"
ROUND_TAG = "round/"


def round_label(number: int) -> str:
    return f"r{number:03d}"


def candidate_branch(number: int, name: str) -> str:
    return f"{BRANCH_PREFIX}{round_label(number)}-{name}"


@dataclass
class RoundState:
    number: int
    rollout: Commit | None = None
    maintain: Commit | None = None
    gate: Commit | None = None
    branch: str | None = None
    proposal: Commit | None = None
    validation: Commit | None = None


def completed_rounds(workspace: Workspace) -> int:
    numbers = [int(name[len(ROUND_TAG):]) for name in workspace.refs(f"refs/tags/{ROUND_TAG}")
               if name[len(ROUND_TAG):].isdigit()]
    return max(numbers, default=0)


def round_state(workspace: Workspace, number: int) -> RoundState:
    state = RoundState(number)
    for commit in reversed(workspace.log(MAIN)):
        if commit.trailer("Round") != str(number):
            continue
        step = commit.trailer("Step")
        if step in ("rollout", "maintain", "gate"):
            setattr(state, step, commit)
    prefix = f"{BRANCH_PREFIX}{round_label(number)}-"
    for branch in sorted(b for b in workspace.refs(f"refs/heads/{BRANCH_PREFIX}") if b.startswith(prefix)):
        state.branch = branch
        for commit in reversed(workspace.log(branch)):
            if commit.trailer("Round") != str(number):
                continue
            if commit.trailer("Step") == "propose":
                state.proposal = commit
            elif commit.trailer("Step") == "validate":
                state.validation = commit
    return state


def incumbent_score(workspace: Workspace, main_log: list[Commit] | None = None) -> float | None:
    """The score of the latest validation of exactly main's current skills tree, if any."""
    tree = workspace.tree_id(MAIN, "skills")
    for commit in main_log if main_log is not None else workspace.log(MAIN):
        if commit.trailer("Skills-Tree") == tree and commit.trailer("Score") is not None:
            return float(commit.trailer("Score"))
    return None
