"""Rollout and maintain: the round's experience on train, and what the wiki learns from it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..fingerprint import digest
from ..history import round_label
from ..sampling import sample_traces
from ..trailers import Step, Trailers
from ..traces import mean_score, outcomes_jsonl
from ..wiki import apply_maintainer_output, read_wiki
from ..workspace import MAIN
from .summary import of_trajectories

if TYPE_CHECKING:
    from ..harness import Harness
    from ..history import RoundState


class Rollout:
    kind = Step.ROLLOUT

    def done(self, harness: Harness, state: RoundState) -> bool:
        return state.rollout is not None

    def run(self, harness: Harness, state: RoundState) -> None:
        number, label = state.number, round_label(state.number)
        harness.begin_step()
        tree = harness.ws.tree_id(MAIN, "skills")
        cache_key = digest([harness.setup("train").fingerprint(tree), number])
        results = harness.run_tasks("train", MAIN, f"{label} rollout: train", cache_key, harness.config.seed)
        folder = f"raw/{label}/train"
        changes = {f"{folder}/{t.task_id}.json": t.to_json() for t in results}
        changes[f"{folder}/outcomes.jsonl"] = outcomes_jsonl(results)
        harness.commit(f"{label} rollout: train {of_trajectories(results, harness.interactive)}",
                       Trailers(round=number, step=Step.ROLLOUT, score=mean_score(results)), changes)


class Maintain:
    kind = Step.MAINTAIN

    def done(self, harness: Harness, state: RoundState) -> bool:
        return state.maintain is not None

    def run(self, harness: Harness, state: RoundState) -> None:
        number, label = state.number, round_label(state.number)
        harness.begin_step()
        results = harness.train_results(number)
        sampled = sample_traces(results, harness.config.sampling, number)
        wiki = read_wiki(harness.ws.read_files(MAIN, "wiki"))
        harness.reporter.info(f"{label} maintain: {len(sampled)} traces to the wiki maintainer")
        outcome = harness.team.maintainer().run(
            number, wiki, sampled, mean_score(results), sum(t.success for t in results), len(results),
            harness.config.sampling.max_chars,
        )
        trailers = Trailers(round=number, step=Step.MAINTAIN, sampled=",".join(t.task_id for t in sampled))
        if outcome.output is None:
            harness.commit(
                f"{label} maintain failed: wiki unchanged",
                trailers.model_copy(update={"status": "failed"}),
                body=f"The maintainer's reply could not be used after {outcome.attempts} attempts: {outcome.error}",
            )
            return
        update = apply_maintainer_output(outcome.output, wiki, number, [t.task_id for t in results])
        pages = sum(1 for path in update.changes if path.startswith("wiki/patterns/"))
        harness.commit(f"{label} maintain: {pages} pattern page(s) written", trailers, update.changes,
                       body="\n".join(f"- {line}" for line in update.report))
