"""Rollout and maintain: the round's experience on train, and what the wiki learns from it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.config import Role
from ...integrations.ingest import read_ingested
from ...knowledge.consolidation import WordOverlap, consolidate
from ...knowledge.wiki import apply_maintainer_output, check_output, maintainer_view, read_wiki
from ...roles.offline.consolidation import PatternCover
from ...store.rounds import round_label
from ...store.traces import mean_score, outcomes_jsonl, scored
from ...store.trailers import Step, Trailers
from ...store.workspace import MAIN
from ..fingerprint import digest
from ..sampling import sample_traces
from .summary import of_trajectories

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import Harness


class Rollout:
    kind = Step.ROLLOUT

    def done(self, harness: Harness, state: RoundState) -> bool:
        return state.rollout is not None

    def run(self, harness: Harness, state: RoundState) -> None:
        number, label = state.number, round_label(state.number)
        harness.begin_step()
        cache_key = digest([harness.setup("train").fingerprint(harness.skills_id(MAIN)), number])
        results = harness.run_tasks("train", MAIN, f"{label} rollout: train", cache_key, harness.config.seed)
        folder = f"raw/{label}/train"
        changes = {f"{folder}/{t.task_id}.json": t.to_json() for t in results}
        changes[f"{folder}/outcomes.jsonl"] = outcomes_jsonl(results)
        harness.commit(
            f"{label} rollout: train {of_trajectories(results, harness.interactive)}",
            Trailers(round=number, step=self.kind, score=mean_score(results)),
            changes,
        )


class Maintain:
    kind = Step.MAINTAIN

    def done(self, harness: Harness, state: RoundState) -> bool:
        return state.maintain is not None or not harness.config.maintainer.enabled

    def run(self, harness: Harness, state: RoundState) -> None:
        number, label = state.number, round_label(state.number)
        harness.begin_step()
        results = scored(harness.train_results(number))  # an infrastructure failure is not the agent's
        experience = results + read_ingested(harness.ws, number)
        sampled = sample_traces(experience, harness.config.sampling, number)
        wiki = read_wiki(harness.ws.read_files(MAIN, "wiki"))
        max_chars = harness.config.sampling.max_chars
        view = maintainer_view(
            wiki, "\n".join(t.render(max_chars) for t in sampled), harness.config.maintainer.wiki_token_budget
        )
        shown, known = [t.task_id for t in sampled], [t.task_id for t in experience]
        harness.reporter.info(f"{label} maintain: {len(sampled)} traces to the wiki maintainer")
        outcome = harness.team.maintainer().run(
            number,
            view,
            sampled,
            mean_score(results),
            sum(t.success for t in results),
            len(results),
            max_chars,
            check=lambda output: check_output(output, wiki, number, shown, known),
        )
        trailers = Trailers(
            round=number, step=self.kind, sampled=",".join(shown), attempts=outcome.attempts, wiki_tokens=view.tokens()
        )
        retry = [f"- retried after: {reason}" for reason in outcome.retry_reasons]
        transcript = {f"raw/{label}/maintainer.json": outcome.transcript.to_json()}
        if outcome.output is None:
            harness.commit(
                f"{label} maintain failed: wiki unchanged",
                trailers.model_copy(update={"status": "failed"}),
                transcript,
                body="\n".join(
                    [
                        f"The maintainer's reply could not be used after {outcome.attempts} attempts: {outcome.error}",
                        *retry,
                    ]
                ),
            )
            return
        update = apply_maintainer_output(outcome.output, wiki, number, shown, known)
        pages = sum(1 for path in update.changes if path.startswith("wiki/patterns/"))
        harness.commit(
            f"{label} maintain: {pages} pattern page(s) written",
            trailers.model_copy(update={"refused": len(update.refused)}),
            {**update.changes, **transcript},
            body="\n".join(
                [
                    *retry,
                    *(f"- {line}" for line in update.report),
                    *(f"- derived for {line}" for line in update.derived_lines()),
                    *(f"- refused, not written: {line}" for line in update.refused),
                ]
            ),
        )


class Consolidate:
    """Every `wiki.consolidate_every` rounds: duplicate pages merged, stale ones retired, by fixed
    rules, as one commit (the offline maintainer's patterns decide duplicates by what they cover)."""

    kind = Step.CONSOLIDATE

    def done(self, harness: Harness, state: RoundState) -> bool:
        every = harness.config.wiki.consolidate_every
        due = every > 0 and state.number % every == 0 and harness.config.maintainer.enabled
        return not due or state.consolidate is not None

    def run(self, harness: Harness, state: RoundState) -> None:
        number, label = state.number, round_label(state.number)
        harness.begin_step()
        settings = harness.config.wiki
        rule = PatternCover() if harness.team.offline(Role.MAINTAINER) else WordOverlap(settings.duplicate_similarity)
        result = consolidate(
            harness.ws.read_files(MAIN, "wiki"), harness.ws.read_files(MAIN, "skills"), number, settings, rule
        )
        harness.commit(
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
