"""State derived from git: rounds, the steps of a round that are done, recorded scores.
No second source of truth."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import WorkspaceError
from .reads import WorkspaceReads
from .trailers import Step
from .workspace import MAIN, Commit

BRANCH_PREFIX = "skill/"
REJECTED_PREFIX = "rejected/"
PENDING_PREFIX = "pending/"
ROUND_TAG = "round/"
MAIN_SIDE_FILE = "val-main.jsonl"
"""In raw/rNNN/ on a candidate branch: main's per-task outcomes on the tasks a sequential
validation's looks used (`incumbent-val.jsonl` is main's own re-validation in a round)."""


def round_label(number: int) -> str:
    return f"r{number:03d}"


def candidate_branch(number: int, name: str) -> str:
    return f"{BRANCH_PREFIX}{round_label(number)}-{name}"


def candidate_id(branch: str) -> str:
    """`rNNN-<name>` of a candidate's `skill/`, `pending/` or `rejected/` ref."""
    return branch.split("/", 1)[1]


def rejected_tag(branch: str) -> str:
    return f"{REJECTED_PREFIX}{candidate_id(branch)}"


def pending_branch(branch: str) -> str:
    return f"{PENDING_PREFIX}{candidate_id(branch)}"


@dataclass
class RoundState:
    """What of round `number` is in git: its commits on main, and its candidate branch if any."""

    number: int
    rollout: Commit | None = None
    maintain: Commit | None = None
    consolidate: Commit | None = None
    gate: Commit | None = None
    branch: str | None = None
    tip: str | None = None
    proposal: Commit | None = None
    """The original `propose` commit on the branch (a `reapply` merge may follow it)."""
    validations: list[Commit] = field(default_factory=list)
    confirmations: list[Commit] = field(default_factory=list)
    """`validate` and `confirm` commits on the branch, newest first."""

    @property
    def started(self) -> bool:
        return any((self.rollout, self.maintain, self.gate, self.branch))

    @property
    def closed(self) -> bool:
        return self.gate is not None

    @property
    def candidate(self) -> str:
        """The candidate branch, for the steps that run only while there is one."""
        if self.branch is None:
            raise WorkspaceError(f"{round_label(self.number)} has no candidate branch")
        return self.branch


def completed_rounds(workspace: WorkspaceReads) -> int:
    numbers = [
        int(name[len(ROUND_TAG) :])
        for name in workspace.refs(f"refs/tags/{ROUND_TAG}")
        if name[len(ROUND_TAG) :].isdigit()
    ]
    return max(numbers, default=0)


def round_state(workspace: WorkspaceReads, number: int) -> RoundState:
    state = RoundState(number)
    round_steps = (Step.ROLLOUT, Step.MAINTAIN, Step.CONSOLIDATE, Step.GATE)
    for commit in reversed(workspace.log(MAIN)):
        if commit.meta.round == number and commit.meta.step in round_steps:
            setattr(state, commit.meta.step.value, commit)
    prefix = f"{BRANCH_PREFIX}{round_label(number)}-"
    for branch, tip in sorted(workspace.refs(f"refs/heads/{BRANCH_PREFIX}").items()):
        if not branch.startswith(prefix):
            continue
        read_branch(workspace, state, branch, tip)
    return state


def leftover_branches(workspace: WorkspaceReads) -> dict[str, int]:
    """`{branch: round}` of the `skill/` branches whose round its gate already decided (a gate
    commit on main): a decided candidate lives on as a merge or a `rejected/` tag, never as a
    branch, so one still there is what an interrupted run left."""
    decided = {commit.meta.round for commit in workspace.log(MAIN) if commit.meta.step == Step.GATE}
    found = {}
    for branch in workspace.refs(f"refs/heads/{BRANCH_PREFIX}"):
        label = candidate_id(branch).split("-", 1)[0]
        if label[:1] == "r" and label[1:].isdigit() and int(label[1:]) in decided:
            found[branch] = int(label[1:])
    return found


def read_branch(workspace: WorkspaceReads, state: RoundState, branch: str, tip: str) -> RoundState:
    """Fill `state` with the candidate on `branch` (a `skill/` or a `pending/` one)."""
    state.branch, state.tip = branch, tip
    for commit in workspace.log(branch):
        if commit.meta.round != state.number:
            continue
        if commit.meta.step == Step.PROPOSE:
            state.proposal = commit
        elif commit.meta.step == Step.VALIDATE:
            state.validations.append(commit)
        elif commit.meta.step == Step.CONFIRM:
            state.confirmations.append(commit)
    return state


def incumbent_score(
    workspace: WorkspaceReads, wiki_access: bool = False, main_log: list[Commit] | None = None
) -> float | None:
    """The score last recorded for main's current skills, under whatever setup it was run."""
    from .evaluations import skills_id

    current = skills_id(workspace, MAIN, wiki_access)
    for commit in main_log if main_log is not None else workspace.log(MAIN):
        if commit.meta.skills_id == current and commit.meta.score is not None:
            return commit.meta.score
    return None
