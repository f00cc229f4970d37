"""`wikiskill review`: the candidates waiting for a person (`gate.review: human`), each with what a
decision needs: the diff of its skills against main, the tasks it fixed and broke, the gate's
interval, the change in the agent's cost per task, and the wiki pages and traces the proposal
cites or its proposer read. Read from git alone (no model, no benchmark)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

from ..contracts.gate import Effect
from ..core.errors import WorkspaceError
from ..store.evaluations import skills_id
from ..store.pending import REVIEW_FILE, Pending, pending_candidates
from ..store.rounds import round_label
from ..store.settings import load_config
from ..store.trailers import Step
from ..store.workspace import MAIN, Workspace

PAGE = re.compile(r"wiki/patterns/[\w.-]+\.md|patterns/[\w.-]+\.md")


@dataclass
class ReviewItem:
    id: str
    """`rNNN-<name>`: what `accept` and `reject` take (the skill's name works too)."""
    branch: str
    round: int
    action: str
    skill: str
    candidate: float | None
    incumbent: float | None
    reason: str
    """The gate's verdict, in its words."""
    policy: str = ""
    interval: str | None = None
    mean_diff: float | None = None
    fixed: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    helped: list[str] = field(default_factory=list)
    hurt: list[str] = field(default_factory=list)
    cost: dict[str, float] = field(default_factory=dict)
    """Mean per-task `candidate_tokens`, `incumbent_tokens`, `candidate_usd`, `incumbent_usd` on the
    val tasks both sides scored."""
    pages: list[str] = field(default_factory=list)
    """Wiki pages the proposal links or its proposer read."""
    traces: list[str] = field(default_factory=list)
    """Traces its proposer read."""
    rationale: str = ""
    main_moved: bool = False
    """Main's skills changed since it was validated: `accept` validates it again first."""
    diff: str = ""

    @property
    def effect(self) -> Effect:
        return Effect(self.helped, self.fixed, self.hurt, self.broken)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def review_queue(ws: Workspace) -> list[ReviewItem]:
    wiki_access = load_config(ws.root).agent.wiki_access
    return [
        _item(ws, pending, pending.tip, wiki_access)
        for pending in pending_candidates(ws)
        if pending.tip is not None  # every undecided candidate still has its branch
    ]


def _item(ws: Workspace, pending: Pending, tip: str, wiki_access: bool) -> ReviewItem:
    meta, label = pending.evidence.meta, round_label(pending.round)
    record = json.loads(ws.read_file(pending.evidence.sha, f"raw/{label}/{REVIEW_FILE}") or "{}")
    propose = next((c for c in ws.log(pending.branch) if c.meta.step == Step.PROPOSE), None)
    rationale = ws.body(propose.sha).split("\n\n")[0].strip() if propose else ""
    diff = ws.diff(MAIN, tip, "skills")
    reads = _reads(ws.read_file(tip, f"raw/{label}/proposer.json"))
    cited = PAGE.findall(f"{diff}\n{rationale}") + [path for path in reads if PAGE.fullmatch(path)]
    return ReviewItem(
        id=pending.id,
        branch=pending.branch,
        round=pending.round,
        action=meta.action or "",
        skill=pending.skill,
        candidate=meta.score,
        incumbent=meta.incumbent,
        reason=record.get("reason") or ws.body(pending.evidence.sha).split("\n")[0],
        policy=meta.policy or "",
        interval=meta.interval,
        mean_diff=meta.mean_diff,
        fixed=record.get("fixed", []),
        broken=record.get("broken", []),
        helped=record.get("helped", []),
        hurt=record.get("hurt", []),
        cost=record.get("cost", {}),
        pages=sorted({_page(path) for path in cited}),
        traces=[path for path in dict.fromkeys(reads) if path.startswith("traces/")],
        rationale=rationale,
        main_moved=_main_moved(ws, pending, tip, wiki_access),
        diff=diff,
    )


def _reads(transcript: str | None) -> list[str]:
    """The paths the proposer's `read_file` calls asked for, in order."""
    if not transcript:
        return []
    calls = [call for turn in json.loads(transcript).get("turns", []) for call in turn.get("calls", [])]
    return [
        str(call["arguments"].get("path"))
        for call in calls
        if call.get("name") == "read_file" and isinstance(call.get("arguments"), dict)
    ]


def _page(path: str) -> str:
    return path if path.startswith("wiki/") else f"wiki/{path}"


def _main_moved(ws: Workspace, pending: Pending, tip: str, wiki_access: bool) -> bool:
    try:
        merged = ws.merged_tree(MAIN, tip)
    except WorkspaceError:
        return True
    return skills_id(ws, merged, wiki_access) != pending.evidence.meta.skills_id
