"""Rollout and maintain: the round's experience on train, and what the wiki learns from it."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, ClassVar

from ...integrations.ingest import read_ingested
from ...knowledge.consolidation import WordOverlap, consolidate
from ...knowledge.wiki import apply_maintainer_output, check_output, maintainer_view, read_wiki
from ...roles.offline.consolidation import PatternCover
from ...roles.settings import Role
from ...store.rounds import round_label
from ...store.traces import mean_score, outcomes_jsonl, scored
from ...store.trailers import Parsed, Step, Trailers
from ...store.workspace import MAIN
from ..fingerprint import digest
from ..sampling import sample_traces
from .summary import of_trajectories

WEAK_MAINTAINER = (
    "the maintainer's model looks too weak for the role (its pages did not parse or were all refused): "
    "try a larger `maintainer.model` (the roles may use another model than the agent), or "
    "`maintainer.response_format: json_schema` on a server that takes a JSON schema"
)

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import StepContext


class Rollout:
    kind: ClassVar[Step] = Step.ROLLOUT

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        return state.rollout is not None

    def run(self, ctx: StepContext, state: RoundState) -> None:
        reader, evaluator = ctx.reader, ctx.evaluator
        number, label = state.number, round_label(state.number)
        ctx.publisher.begin_step()
        cache_key = digest([evaluator.setup("train").fingerprint(reader.skills_id(MAIN)), number])
        results = evaluator.run_tasks("train", MAIN, f"{label} rollout: train", cache_key, reader.config.seed)
        folder = f"raw/{label}/train"
        changes = {f"{folder}/{t.task_id}.json": t.to_json() for t in results}
        changes[f"{folder}/outcomes.jsonl"] = outcomes_jsonl(results)
        ctx.publisher.commit(
            f"{label} rollout: train {of_trajectories(results, reader.interactive)}",
            Trailers(round=number, step=self.kind, score=mean_score(results)),
            changes,
        )


class Maintain:
    kind: ClassVar[Step] = Step.MAINTAIN

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        return state.maintain is not None or not ctx.reader.config.maintainer.enabled

    def run(self, ctx: StepContext, state: RoundState) -> None:
        reader, publisher, config = ctx.reader, ctx.publisher, ctx.reader.config
        number, label = state.number, round_label(state.number)
        publisher.begin_step()
        results = scored(reader.train_results(number))  # an infrastructure failure is not the agent's
        experience = results + read_ingested(reader.ws, number)
        sampled = sample_traces(experience, config.sampling, number)
        wiki = read_wiki(reader.ws.read_files(MAIN, "wiki"))
        max_chars = config.sampling.max_chars
        traces = "\n".join(t.render(max_chars) for t in sampled)
        view = maintainer_view(wiki, traces, config.maintainer.wiki_token_budget)
        shown, known = [t.task_id for t in sampled], [t.task_id for t in experience]
        reader.reporter.info(f"{label} maintain: {len(sampled)} traces to the wiki maintainer")
        on_turn = partial(reader.reporter.turn, f"{label} maintain")
        outcome = ctx.evaluator.team.maintainer(on_turn).run(
            number,
            view,
            sampled,
            mean_score(results),
            sum(t.success for t in results),
            len(results),
            max_chars,
            check=lambda output, seen: check_output(output, wiki, number, seen, known),
        )
        seen = shown if outcome.shown is None else outcome.shown
        trailers = Trailers(
            round=number,
            step=self.kind,
            sampled=",".join(shown),
            attempts=outcome.attempts,
            wiki_tokens=view.tokens(),
            parsed=outcome.parsed,
            prompt_budget=outcome.prompt_budget,
        )
        notes = [f"- {outcome.budget_note}"] if outcome.budget_note else []
        notes += [f"- retried after: {reason}" for reason in outcome.retry_reasons]
        transcript = {f"raw/{label}/maintainer.json": outcome.transcript.to_json()}
        if outcome.output is None:
            why = f"The maintainer's reply could not be used after {outcome.attempts} attempt(s): {outcome.error}"
            weak = outcome.parsed == Parsed.GAVE_UP and bool(outcome.retry_reasons)
            reader.reporter.info(f"{label} maintain: no page written: {outcome.error}")
            if weak:
                reader.reporter.info(f"{label} maintain: {WEAK_MAINTAINER}")
            publisher.commit(
                f"{label} maintain failed: wiki unchanged",
                trailers.model_copy(update={"status": "failed"}),
                transcript,
                body="\n".join([why, *notes, *([f"- {WEAK_MAINTAINER}"] if weak else [])]),
            )
            return
        update = apply_maintainer_output(outcome.output, wiki, number, seen, known)
        pages = sum(1 for path in update.changes if path.startswith("wiki/patterns/"))
        weak = not pages and bool(update.refused)
        if weak:
            reader.reporter.info(f"{label} maintain: 0 pages written, {len(update.refused)} refused: {WEAK_MAINTAINER}")
        publisher.commit(
            f"{label} maintain: {pages} pattern page(s) written",
            trailers.model_copy(update={"refused": len(update.refused)}),
            {**update.changes, **transcript},
            body="\n".join(
                [
                    *notes,
                    *(f"- {line}" for line in update.report),
                    *(f"- derived for {line}" for line in update.derived_lines()),
                    *(f"- refused, not written: {line}" for line in update.refused),
                    *([f"- 0 pages written: {WEAK_MAINTAINER}"] if weak else []),
                ]
            ),
        )


class Consolidate:
    """Every `wiki.consolidate_every` rounds: duplicate pages merged, stale ones retired, by fixed
    rules, as one commit (the offline maintainer's patterns decide duplicates by what they cover)."""

    kind: ClassVar[Step] = Step.CONSOLIDATE

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        config = ctx.reader.config
        every = config.wiki.consolidate_every
        due = every > 0 and state.number % every == 0 and config.maintainer.enabled
        return not due or state.consolidate is not None

    def run(self, ctx: StepContext, state: RoundState) -> None:
        ws, publisher = ctx.reader.ws, ctx.publisher
        number, label = state.number, round_label(state.number)
        publisher.begin_step()
        settings = ctx.reader.config.wiki
        offline = ctx.evaluator.team.offline(Role.MAINTAINER)
        rule = PatternCover() if offline else WordOverlap(settings.duplicate_similarity)
        result = consolidate(ws.read_files(MAIN, "wiki"), ws.read_files(MAIN, "skills"), number, settings, rule)
        publisher.commit(
            f"{label} consolidate: {len(result.merged)} merged, {len(result.retired)} retired",
            Trailers(round=number, step=self.kind, merged=len(result.merged), retired=len(result.retired)),
            result.changes,
            body="\n".join(
                [
                    *(f"- merged {gone} into {kept}" for gone, kept in result.merged),
                    *(
                        f"- retired {slug}: no new evidence for {settings.retire_after} rounds"
                        for slug in result.retired
                    ),
                ]
            ),
        )
