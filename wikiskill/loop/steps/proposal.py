"""Propose a skill change on its own branch, and re-apply it when main moved under it."""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from ...benchmarks import BenchmarkKind
from ...contracts.roles import ProposerContext, WaitingCandidate
from ...core.errors import WorkspaceError
from ...core.prompts import render_fields
from ...integrations.ingest import read_ingested
from ...knowledge.junk import WEAK_PROPOSER, Known, junk_reason, reserved_names
from ...knowledge.leakage import leak_reason
from ...knowledge.library_budget import over_budget
from ...knowledge.proposals import InvalidProposal, Proposal, prepare_proposal
from ...roles.proposer import CALL_FAILED
from ...roles.sandbox import Sandbox
from ...store.pending import Pending, pending_candidates
from ...store.rounds import candidate_branch, round_label
from ...store.traces import Trajectory, mean_score, scored
from ...store.trailers import Action, Decision, Parsed, Step, Trailers
from ...store.uplift_record import rarely_loaded, retire_candidates
from ...store.workspace import MAIN
from ..impact import IMPACT
from .evaluation import incumbent
from .gate import close_without_merge

_HEADER_END = re.compile(r"\n(?:## |- )")
"""Where a wiki file's fixed header ends: its first entry or list line."""

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import StepContext
    from ..reading import Reader


class Propose:
    """Commit a valid proposal on its candidate branch; record no_action or an invalid one on main."""

    kind: ClassVar[Step] = Step.PROPOSE

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        return state.closed or state.proposal is not None

    def run(self, ctx: StepContext, state: RoundState) -> None:
        reader, publisher, ws = ctx.reader, ctx.publisher, ctx.reader.ws
        if state.branch is not None:  # cut, but the proposal commit never landed
            publisher.delete_branch(state.branch)
        number, label = state.number, round_label(state.number)
        publisher.begin_step()
        results = reader.train_results(number)
        score = incumbent(ctx.evaluator).mean
        pending = pending_candidates(ws)
        settings = reader.config.skills
        context = ProposerContext(
            round=number,
            incumbent=score,
            train_score=mean_score(results),
            index=ws.read_file(MAIN, "wiki/index.md") or "",
            impact=ws.read_file(MAIN, IMPACT) or "",
            skills=reader.skills_at(MAIN),
            outcomes=[_outcome_row(t) for t in scored(results) + read_ingested(ws, number)],
            pending=[WaitingCandidate(str(item.evidence.meta.action), item.skill, item.branch) for item in pending],
            locked=list(settings.locked),
            retire=retire_candidates(ws),
            rarely_loaded=rarely_loaded(ws),
            max_tokens=settings.max_tokens,
        )
        turns = reader.config.proposer.max_turns
        reader.reporter.info(f"{label} propose: the skill proposer is investigating (at most {turns} turns)")
        on_turn = partial(reader.reporter.turn, f"{label} propose")
        skills = ws.read_files(MAIN, "skills")
        links = ws.links(MAIN, "skills")

        def refusal(raw: dict[str, object], prompt: list[dict[str, object]]) -> tuple[Proposal, str | None]:
            """The proposal prepared, and why it is refused before validation, but for held-out
            text (which the proposer is never told of)."""
            proposal = prepare_proposal(raw, dict(skills), number)
            return proposal, (
                _refusal(proposal, settings.locked, pending, links)
                or junk_reason(proposal, _known(reader, context, prompt[:1]))
                or over_budget(skills, proposal.changes, settings, context.retire)
            )

        def correctable(raw: dict[str, object], prompt: list[dict[str, object]]) -> str | None:
            try:
                return refusal(raw, prompt)[1]
            except InvalidProposal as invalid:
                return invalid.reason

        result = ctx.evaluator.team.proposer(Sandbox(ws, MAIN), on_turn, correctable).run(context)
        transcript = {f"raw/{label}/proposer.json": result.transcript.to_json()}
        try:
            if result.proposal is None:
                raise InvalidProposal(result.error or "no proposal")
            proposal, junk = refusal(result.proposal, result.transcript.messages)
            junk = junk or leak_reason(reader.held_out, proposal.changes)
            if junk:
                raise InvalidProposal(junk, proposal.action, proposal.name, proposal.rationale)
        except InvalidProposal as invalid:
            reason = invalid.reason
            weak = result.parsed == Parsed.GAVE_UP and not (result.error or "").startswith(CALL_FAILED)
            if weak and WEAK_PROPOSER not in reason:
                reason = f"{reason}; {WEAK_PROPOSER}"
            reader.reporter.info(f"{label} propose: invalid proposal: {reason}")
            close_without_merge(
                ctx,
                number,
                invalid.action,
                invalid.name,
                invalid.rationale,
                Decision.INVALID,
                f"invalid proposal: {reason}",
                score,
                changes=transcript,
                parsed=result.parsed,
            )
            return
        if proposal.action == Action.NO_ACTION:
            close_without_merge(
                ctx,
                number,
                Action.NO_ACTION,
                "",
                proposal.rationale,
                Decision.NO_ACTION,
                "the proposer proposed no change",
                score,
                changes=transcript,
                parsed=result.parsed,
            )
            return
        branch = candidate_branch(number, proposal.name)
        publisher.create_branch(branch, MAIN)
        notes = "\n".join(f"- {note}" for note in proposal.notes)
        publisher.commit(
            f"{label} propose: {proposal.action} {proposal.name}",
            Trailers(
                round=number,
                step=self.kind,
                action=proposal.action,
                skill=proposal.name,
                reads=len(result.reads),
                parsed=result.parsed,
            ),
            {**proposal.changes, **transcript},
            body="\n\n".join(filter(None, [proposal.rationale or "(no rationale given)", notes])),
            branch=branch,
        )


class Reapply:
    """A candidate is validated on exactly main's current skills plus the proposal: when main moved
    after the branch was cut (a rollback, a hand edit, a re-validation), main is merged into the
    branch, and the candidate is validated again; a conflict rejects it as stale."""

    kind: ClassVar[Step] = Step.REAPPLY

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        ws = ctx.reader.ws
        return state.closed or state.tip is None or ws.is_ancestor(ws.resolve(MAIN), state.tip)

    def run(self, ctx: StepContext, state: RoundState) -> None:
        ws, publisher, tip = ctx.reader.ws, ctx.publisher, state.tip or ""
        number, label = state.number, round_label(state.number)
        main = ws.resolve(MAIN)
        meta = state.proposal.meta if state.proposal else Trailers()
        cut = ws.merge_base(MAIN, tip) or "?"
        moved = f"main moved from {cut[:10]} to {main[:10]} after the branch was cut"
        publisher.begin_step()
        try:
            tree = ws.merged_tree(MAIN, tip)
        except WorkspaceError:
            close_without_merge(
                ctx,
                number,
                meta.action,
                meta.skill or "",
                "",
                Decision.REJECTED,
                f"stale: {moved}, and the proposal conflicts with main's skills now",
                incumbent(ctx.evaluator).mean,
                branch=state.branch,
            )
            return
        publisher.commit(
            f"{label} reapply: {meta.action} {meta.skill} onto main {main[:10]}",
            Trailers(round=number, step=self.kind, action=meta.action, skill=meta.skill),
            body=f"{moved}; the proposal is re-applied onto main's current skills (no task ran here: the "
            "validate step that follows measures the candidate on them).",
            branch=state.candidate,
            base=tree,
            extra_parents=(main,),
        )


def _refusal(proposal: Proposal, locked: list[str], pending: list[Pending], links: list[str]) -> str | None:
    """Why a proposal is refused before validation: it changes a locked skill (`skills.locked`),
    writes at or through a symbolic link a person committed under skills/ (the commit would leave
    the link alone, so the candidate would not be the proposal), or a candidate of the same skill
    already waits for a person's review."""
    if proposal.action == Action.NO_ACTION:
        return None
    linked = next(
        (link for link in links for path in proposal.changes if path == link or path.startswith(f"{link}/")), None
    )
    if linked is not None:
        return (
            f"{linked} is a symbolic link; wikiskill never writes at or through one ({proposal.action} {proposal.name})"
        )
    if proposal.name in locked:
        return f"skill {proposal.name!r} is locked (skills.locked); a person unlocks it with `wikiskill unlock`"
    waiting = next((item for item in pending if item.skill == proposal.name), None)
    if waiting is not None:
        return f"a candidate of skill {proposal.name!r} already waits for review as {waiting.branch}"
    return None


def _known(reader: Reader, context: ProposerContext, system: list[dict[str, object]]) -> Known:
    """What a created skill is checked against before validation: the suite's task ids (train,
    val and ingested), the workspace's and the wiki's own files, and the prompt's fixed text (the
    system prompt, the user prompt without this round's data, the wiki files' headers)."""
    ws = reader.ws
    task_ids = [str(row["id"]) for row in context.outcomes] + [task.id for task in reader.tasks("val")]
    files = [path for path in ws.list_paths(MAIN, "") if "/" not in path]
    wiki = [path for path in ws.list_paths(MAIN, "wiki") if not path.startswith("wiki/patterns/")]
    headers = [_HEADER_END.split(ws.read_file(MAIN, path) or "", maxsplit=1)[0] for path in wiki]
    fixed = render_fields("proposer_user", ProposerContext().prompt_fields())
    prompt = [str(message.get("content") or "") for message in system] + [fixed, *headers]
    return Known(reserved_names(task_ids, [*files, *wiki]), prompt)


def _cell(value: object, limit: int = 80) -> str:
    text = " ".join(str(value if value is not None else "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _outcome_row(trajectory: Trajectory) -> dict[str, object]:
    row = trajectory.outcome()
    if trajectory.kind == BenchmarkKind.INTERACTIVE:
        ending = "won" if trajectory.won else "lost" if trajectory.lost else "unfinished"
        row["prediction"] = f"{ending} in {len(trajectory.steps)} steps"
        row["expected"] = "win"
    if trajectory.provenance is not None:
        source = trajectory.provenance
        row["expected"] = f"(ingested {source.format} session, outcome {source.outcome.value})"
    row["prediction"], row["expected"] = _cell(row["prediction"]), _cell(row["expected"])
    return row
