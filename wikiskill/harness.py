"""The steps of a round. Each step reads main (or a candidate branch), runs a role, and publishes
exactly one commit whose trailers say what happened; evolve.py strings the steps together."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from .benchmarks import Split, load_benchmark
from .config import Config, load_config
from .gate import GateDecision, decide, impact_entry
from .history import REJECTED_PREFIX, candidate_branch, round_label
from .llm import Meter
from .proposals import InvalidProposal, prepare_proposal
from .runner import AgentRecipe, ResultCache, cache_key, run_in_workers, run_tasks
from .sampling import sample_traces
from .sandbox import Sandbox
from .skills import Skill, load_skills
from .team import ModelFactory, Team
from .traces import Trajectory, Usage, mean_score, outcomes_jsonl
from .wiki import IMPACT, apply_maintainer_output, read_wiki
from .workspace import MAIN, Workspace, format_message


class Reporter(Protocol):
    """Where progress goes: the CLI shows rich progress bars; the library default is silent."""

    def info(self, message: str) -> None: ...

    def tasks(self, description: str, total: int) -> AbstractContextManager[Callable[[Trajectory], None]]: ...

    def preparing(self, done: int, total: int) -> None:
        """Progress of one-off benchmark preparation (e.g. generating games)."""


class QuietReporter:
    def info(self, message: str) -> None:
        pass

    def preparing(self, done: int, total: int) -> None:
        pass

    def tasks(self, description: str, total: int) -> AbstractContextManager[Callable[[Trajectory], None]]:
        return nullcontext(lambda trajectory: None)


def _fraction(trajectories: list[Trajectory]) -> str:
    passed = sum(t.success for t in trajectories)
    return f"{passed}/{len(trajectories)} ({mean_score(trajectories):.3f})"


class Harness:
    def __init__(
        self,
        workspace: Workspace,
        config: Config | None = None,
        reporter: Reporter | None = None,
        model_factory: ModelFactory | None = None,
    ):
        self.ws = workspace
        self.config = config or load_config(workspace.root)
        self.reporter = reporter or QuietReporter()
        self.benchmark = load_benchmark(self.config, workspace.root, progress=self.reporter.preparing)
        self.meter = Meter(self.config.budget)
        self.team = Team(self.config, self.benchmark, self.meter, workspace.state_dir, model_factory)
        self._step_start = Usage()
        self._step_roles: dict[str, Usage] = {}
        self._model_factory = model_factory
        self._train_results: tuple[str, list[Trajectory]] = ("", [])  # (tree id, trajectories)

    # -- helpers ------------------------------------------------------------------------------

    def skills_at(self, ref: str) -> list[Skill]:
        return load_skills(self.ws.read_files(ref, "skills"))

    def _agent_fingerprint(self) -> str:
        c = self.config
        return cache_key(c.benchmark, c.role("agent").model_dump(), c.agent.max_steps, c.skills.model_dump(),
                         c.seed, c.splits.model_dump())

    def run_split(self, split: Split, ref: str, description: str, round_number: int | None = None) -> list[Trajectory]:
        """Run the agent with the skills at `ref` on a split; finished tasks are cached.

        The cache key holds the skills tree, so an unchanged skill set is never run twice
        (train rollouts also key on the round, which seeds the agent).
        """
        tasks = self.benchmark.tasks(split)
        tree = self.ws.tree_id(ref, "skills")
        cache = ResultCache(self.ws.state_dir, cache_key(split, tree, round_number, self._agent_fingerprint()))
        skills = self.skills_at(ref)
        concurrency = self.config.concurrency
        with self.reporter.tasks(description, len(tasks)) as on_done:
            if self.config.workers > 1 and self._model_factory is None:  # a host's factory cannot cross processes
                recipe = AgentRecipe(self.ws.root, self.ws.state_dir, self.config, tuple(skills))
                return run_in_workers(tasks, recipe, self.config.workers, concurrency, self.meter, cache, on_done)
            return run_tasks(tasks, self.team.agent(skills), concurrency, self.meter, cache, on_done)

    def _begin(self) -> None:
        self._step_start = self.meter.total
        self._step_roles = self.meter.snapshot()

    def _commit(self, subject: str, trailers: dict[str, object], changes: dict[str, str | None] | None = None,
                body: str = "", branch: str = MAIN, base: str | None = None,
                extra_parents: tuple[str, ...] = ()) -> str:
        total = self.meter.total
        trailers = {**trailers, "Cost-USD": f"{total.cost_usd - self._step_start.cost_usd:.6f}",
                    "Tokens": total.tokens - self._step_start.tokens, **self._role_trailers()}
        message = format_message(subject, trailers, body)
        return self.ws.commit(changes or {}, message, branch=branch, base=base, extra_parents=extra_parents)

    def _role_trailers(self) -> dict[str, str]:
        """`Cost-<Role>-USD` and `Tokens-<Role>` of each role that made calls in this step."""
        trailers = {}
        for role, usage in sorted(self.meter.snapshot().items()):
            before = self._step_roles.get(role, Usage())
            if usage.calls > before.calls:
                trailers[f"Cost-{role.title()}-USD"] = f"{usage.cost_usd - before.cost_usd:.6f}"
                trailers[f"Tokens-{role.title()}"] = str(usage.tokens - before.tokens)
        return trailers

    # -- steps --------------------------------------------------------------------------------

    def baseline(self, round_number: int, first: bool) -> float:
        """Validate main's skills on val; the first time this is tagged `baseline`."""
        self._begin()
        what = "baseline" if first else "re-validate incumbent"
        results = self.run_split("val", MAIN, f"{what}: val")
        score = mean_score(results)
        folder = "raw/baseline" if first else f"raw/{round_label(round_number)}"
        sha = self._commit(
            f"{what}: val {_fraction(results)}",
            {"Round": round_number, "Step": "baseline", "Score": f"{score:.6f}",
             "Skills-Tree": self.ws.tree_id(MAIN, "skills")},
            {f"{folder}/{'val' if first else 'incumbent-val'}.jsonl": outcomes_jsonl(results)},
        )
        if first:
            self.ws.tag("baseline", sha)
        return score

    def rollout(self, round_number: int) -> None:
        self._begin()
        results = self.run_split("train", MAIN, f"{round_label(round_number)} rollout: train", round_number)
        folder = f"raw/{round_label(round_number)}/train"
        changes = {f"{folder}/{t.task_id}.json": t.to_json() for t in results}
        changes[f"{folder}/outcomes.jsonl"] = outcomes_jsonl(results)
        self._commit(
            f"{round_label(round_number)} rollout: train {_fraction(results)}",
            {"Round": round_number, "Step": "rollout", "Score": f"{mean_score(results):.6f}"},
            changes,
        )

    def train_results(self, round_number: int) -> list[Trajectory]:
        """The round's train trajectories on main. Maintain and propose both read them, so the
        last ones read are kept with their folder's tree id and reused while it is unchanged."""
        folder = f"raw/{round_label(round_number)}/train"
        tree = self.ws.tree_id(MAIN, folder)
        if self._train_results[0] != tree:
            files = self.ws.read_files(MAIN, folder)
            self._train_results = (tree, [Trajectory.model_validate_json(text) for path, text in sorted(files.items())
                                          if path.endswith(".json")])
        return list(self._train_results[1])

    def maintain(self, round_number: int) -> None:
        self._begin()
        results = self.train_results(round_number)
        sampled = sample_traces(results, self.config.sampling, round_number)
        wiki = read_wiki(self.ws.read_files(MAIN, "wiki"))
        self.reporter.info(f"{round_label(round_number)} maintain: {len(sampled)} traces to the wiki maintainer")
        outcome = self.team.maintainer().run(
            round_number, wiki, sampled, mean_score(results), sum(t.success for t in results), len(results),
            self.config.sampling.max_chars,
        )
        trailers = {"Round": round_number, "Step": "maintain", "Sampled": ",".join(t.task_id for t in sampled)}
        transcript = {f"raw/{round_label(round_number)}/maintainer.json": outcome.transcript.to_json()}
        if outcome.output is None:
            self._commit(
                f"{round_label(round_number)} maintain failed: wiki unchanged",
                {**trailers, "Status": "failed"},
                transcript,
                body=f"The maintainer's reply could not be used after {outcome.attempts} attempts: {outcome.error}",
            )
            return
        update = apply_maintainer_output(outcome.output, wiki, round_number, [t.task_id for t in results])
        pages = sum(1 for path in update.changes if path.startswith("wiki/patterns/"))
        self._commit(
            f"{round_label(round_number)} maintain: {pages} pattern page(s) written",
            trailers,
            {**update.changes, **transcript},
            body="\n".join(f"- {line}" for line in update.report),
        )

    def propose(self, round_number: int, incumbent: float) -> None:
        """Commit a valid proposal on its candidate branch; record no_action or an invalid one on main."""
        self._begin()
        results = self.train_results(round_number)
        library = Sandbox(self.ws, MAIN)
        skills = self.skills_at(MAIN)
        context = {
            "round": round_number,
            "incumbent": incumbent,
            "train_score": mean_score(results),
            "index": self.ws.read_file(MAIN, "wiki/index.md") or "",
            "impact": self.ws.read_file(MAIN, IMPACT) or "",
            "skills": skills,
            "outcomes": [_outcome_row(t) for t in results],
        }
        self.reporter.info(f"{round_label(round_number)} propose: the skill proposer is investigating")
        result = self.team.proposer(library).run(context)
        transcript = {f"raw/{round_label(round_number)}/proposer.json": result.transcript.to_json()}
        try:
            if result.proposal is None:
                raise InvalidProposal(result.error or "no proposal")
            proposal = prepare_proposal(result.proposal, self.ws.read_files(MAIN, "skills"), round_number)
        except InvalidProposal as rejected:
            decision = GateDecision("rejected", f"invalid proposal: {rejected.reason}")
            self._record_without_branch(round_number, rejected.action, rejected.name, rejected.rationale, decision,
                                        incumbent, transcript)
            return
        if proposal.action == "no_action":
            self._record_without_branch(round_number, "no_action", "", proposal.rationale,
                                        GateDecision("no_action", "the proposer proposed no change"), incumbent,
                                        transcript)
            return
        branch = candidate_branch(round_number, proposal.name)
        if self.ws.head(branch) is None:
            self.ws.create_branch(branch, MAIN)
        self._commit(
            f"{round_label(round_number)} propose: {proposal.action} {proposal.name}",
            {"Round": round_number, "Step": "propose", "Action": proposal.action, "Skill": proposal.name,
             "Reads": len(result.reads)},
            {**proposal.changes, **transcript},
            body="\n\n".join(filter(None, [proposal.rationale or "(no rationale given)", "\n".join(f"- {note}" for note in proposal.notes)])),
            branch=branch,
        )

    def _record_without_branch(self, round_number: int, action: str, name: str, rationale: str,
                               decision: GateDecision, incumbent: float, transcript: dict[str, str]) -> None:
        entry = impact_entry(round_number, action, name, rationale, decision, None, incumbent, "main (no branch)")
        impact = self.ws.read_file(MAIN, IMPACT) or ""
        self._commit(
            f"{round_label(round_number)} gate: {decision.decision} ({decision.reason})"[:120],
            {"Round": round_number, "Step": "gate", "Decision": decision.decision, "Action": action,
             "Skill": name or None, "Incumbent": f"{incumbent:.6f}"},
            {IMPACT: f"{impact.rstrip()}\n\n{entry}", **transcript},
            body=decision.reason,
        )

    def validate(self, round_number: int, branch: str) -> None:
        self._begin()
        results = self.run_split("val", branch, f"{round_label(round_number)} validate: val")
        self._commit(
            f"{round_label(round_number)} validate: val {_fraction(results)}",
            {"Round": round_number, "Step": "validate", "Score": f"{mean_score(results):.6f}",
             "Skills-Tree": self.ws.tree_id(branch, "skills")},
            {f"raw/{round_label(round_number)}/val.jsonl": outcomes_jsonl(results)},
            branch=branch,
        )

    def gate(self, round_number: int, branch: str, incumbent: float) -> str:
        """Merge the candidate on strict improvement, else keep it as a rejected tag."""
        self._begin()
        tip = self.ws.head(branch)
        log = self.ws.log(branch)
        validation = next(c for c in log if c.trailer("Step") == "validate" and c.trailer("Round") == str(round_number))
        proposal = next(c for c in log if c.trailer("Step") == "propose" and c.trailer("Round") == str(round_number))
        candidate = float(validation.trailer("Score"))
        decision = decide(candidate, incumbent)
        name, action = proposal.trailer("Skill"), proposal.trailer("Action")
        diff = self.ws.diff(proposal.parents[0], proposal.sha, "skills")
        rationale = self.ws.body(proposal.sha).split("\n\n")[0].strip()
        tag = f"{REJECTED_PREFIX}{branch[len('skill/'):]}"
        where = f"merged from {branch} ({tip[:10]})" if decision.decision == "accepted" else f"tag {tag} ({tip[:10]})"
        entry = impact_entry(round_number, action, name, rationale, decision, candidate, incumbent, where, diff)
        impact = self.ws.read_file(MAIN, IMPACT) or ""
        changes = {IMPACT: f"{impact.rstrip()}\n\n{entry}"}
        trailers = {"Round": round_number, "Step": "gate", "Decision": decision.decision, "Action": action,
                    "Skill": name, "Score": f"{candidate:.6f}", "Incumbent": f"{incumbent:.6f}"}
        subject = f"{round_label(round_number)} gate: {decision.decision} {name} ({decision.reason})"[:120]
        if decision.decision == "accepted":
            merged = self.ws.merged_tree(MAIN, tip)
            self._commit(subject, {**trailers, "Skills-Tree": validation.trailer("Skills-Tree")}, changes,
                         body=decision.reason, base=merged, extra_parents=(tip,))
        else:
            self.ws.tag(tag, tip, force=True)
            self._commit(subject, trailers, changes, body=decision.reason)
        self.ws.delete_branch(branch)
        return decision.decision


def _cell(value: object, limit: int = 80) -> str:
    text = " ".join(str(value if value is not None else "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _outcome_row(trajectory: Trajectory) -> dict:
    row = trajectory.outcome()
    if trajectory.kind == "interactive":
        row["prediction"] = f"{'won' if trajectory.won else 'lost' if trajectory.lost else 'unfinished'} in {len(trajectory.steps)} steps"
        row["expected"] = "win"
    row["prediction"], row["expected"] = _cell(row["prediction"]), _cell(row["expected"])
    return row

