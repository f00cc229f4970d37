"""What every step of a round uses: the workspace, the config, the roles, running tasks with their
results cached, evaluating skills under a fingerprint, and committing with cost trailers.
The steps themselves are classes in wikiskill/loop/steps/."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from ..benchmarks import BenchmarkKind, Split, Task, load_benchmark
from ..benchmarks.harbor import HarborSuite
from ..contracts.gate import GatePolicy
from ..contracts.running import AgentRecipe, Executor, Place, Reporter
from ..core.config import Config, GateSettings
from ..core.errors import WikiskillError
from ..core.parts import LOCAL_EXECUTOR
from ..knowledge.leakage import HeldOut, suite_held_out
from ..knowledge.lint import LINTED
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill, load_skills
from ..llm.meter import Meter
from ..run.executors import open_executor
from ..run.team import ModelFactory, Team
from ..store.evaluations import Evaluation, find_evaluation, outcomes_with_repeats, per_task_outcomes, skills_id
from ..store.harbor_datasets import fetch_for
from ..store.results import ResultCache
from ..store.rounds import round_label
from ..store.settings import load_config
from ..store.traces import Trajectory, Usage
from ..store.trailers import Trailers, format_message, role_cached_key, role_keys
from ..store.unsound import read_unsound
from ..store.workspace import MAIN, Commit, Workspace
from ..telemetry.spans import annotate, tasks_span
from .alpha_budget import Spend, budgeted, current_spend
from .fingerprint import EvalSetup, digest, eval_setup
from .gate_policies import gate_policy

TRACED_TRAILERS = ("decision", "action", "skill", "score", "incumbent", "fingerprint", "policy", "cost_usd", "tokens")
"""The trailers of a step's commit that its span carries too."""


class QuietReporter:
    def info(self, message: str) -> None:
        pass

    def preparing(self, done: int, total: int) -> None:
        pass

    def tasks(self, description: str, total: int) -> AbstractContextManager[Callable[[Trajectory], None]]:
        return nullcontext(lambda trajectory: None)


@dataclass(frozen=True)
class Evaluated:
    """An evaluation just run: its scores, its setup, and the outcomes file to commit."""

    evaluation: Evaluation
    setup: EvalSetup
    runs: list[list[Trajectory]]
    """Each repeat's trajectories, in task order."""

    @property
    def outcomes(self) -> str:
        return outcomes_with_repeats(self.runs)

    def trailers(self, results_path: str) -> dict[str, object]:
        e = self.evaluation
        return {
            "score": e.mean,
            "skills_id": e.skills_id,
            "setup": e.setup,
            "fingerprint": e.fingerprint,
            "results": results_path,
        }


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
        fetch_for(self.config, workspace.root)  # a registry dataset's folder, made once per machine
        self.benchmark = load_benchmark(self.config, workspace.root, progress=self.reporter.preparing)
        self.meter = Meter(self.config.budget)
        self.team = Team(self.config, self.benchmark, self.meter, workspace.state_dir, model_factory)
        self._policy: tuple[GateSettings, GatePolicy] | None = None
        self._step_start = Usage()
        self._step_roles: dict[str, Usage] = {}
        self._model_factory = model_factory
        self._setups: dict[tuple[str, int], EvalSetup] = {}
        self._recorded: dict[tuple[str, str], tuple[Commit, Evaluation] | None] = {}
        self._train_results: tuple[str, list[Trajectory]] = ("", [])  # (tree id, trajectories)
        self._executor: Executor | None = None
        self.test_sealed = True
        self._held_out: HeldOut | None = None
        """No step scores the test split; `history.test_looks.looking_at_test` unseals it for a recorded look."""
        if isinstance(self.benchmark, HarborSuite) and self.config.harbor.require_sound:
            self.benchmark.leave_out(read_unsound(workspace, MAIN))  # as the last evolve left them

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """End the executor's workers (they serve every step of one command)."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    @property
    def executor(self) -> Executor:
        """The config's executor, started by the first step that runs tasks; a host's model
        factory cannot cross processes, so with one the tasks run here."""
        if self._executor is None:
            config = self.config
            if self._model_factory is not None:
                config = config.model_copy(update={"executor": LOCAL_EXECUTOR, "workers": 1})
            self._executor = open_executor(config, Place(self.ws.root, self.ws.state_dir), self.team)
        return self._executor

    @property
    def held_out(self) -> HeldOut:
        """The runs of words of the val and test tasks a skill must not share (`skills.leak_run`)."""
        if self._held_out is None:
            self._held_out = suite_held_out(self.config, self.benchmark)
        return self._held_out

    @property
    def spend(self) -> Spend | None:
        """The next verdict's share of `gate.alpha_budget` (None without one)."""
        return current_spend(self.ws, self.config.gate)

    @property
    def gate_settings(self) -> GateSettings:
        """The gate settings the next verdict runs under (at its share of the budget)."""
        return budgeted(self.config.gate, self.spend)

    @property
    def policy(self) -> GatePolicy:
        settings = self.gate_settings
        if self._policy is None or self._policy[0] != settings:
            self._policy = (settings, gate_policy(settings))
        return self._policy[1]

    @property
    def interactive(self) -> bool:
        return self.benchmark.spec.kind is BenchmarkKind.INTERACTIVE

    # -- evaluating skills ----------------------------------------------------------------------

    def skills_at(self, ref: str) -> list[Skill]:
        return load_skills(self.ws.read_files(ref, "skills"))

    def setup(self, split: Split = "val", first_repeat: int = 0) -> EvalSetup:
        """The evaluation setup of a split under the current settings. `first_repeat` > 0 gives
        fresh seeds (a confirmation run) while keeping everything else."""
        key = (split, first_repeat)
        if key not in self._setups:
            repeats = self.config.gate.repeats if split != "train" else 1
            self._setups[key] = eval_setup(self.config, self.benchmark, split, repeats, first_repeat)
        return self._setups[key]

    def leave_out(self, unsound: dict[str, str]) -> None:
        """Take unsound tasks out of the Harbor suite's splits before anything is evaluated; the
        setups computed so far no longer hold."""
        if isinstance(self.benchmark, HarborSuite):
            self.benchmark.leave_out(unsound)
        self._setups.clear()
        self._recorded.clear()

    def skills_id(self, ref: str) -> str:
        return skills_id(self.ws, ref, self.config.agent.wiki_access)

    def fingerprint(self, ref: str, split: Split = "val", first_repeat: int = 0) -> str:
        return self.setup(split, first_repeat).fingerprint(self.skills_id(ref))

    def recorded(self, ref: str, split: Split = "val") -> tuple[Commit, Evaluation] | None:
        """The evaluation of `ref`'s skills under the current setup, if `ref`'s history records one.
        Kept by commit: a round asks about main several times while main stays put."""
        key = (self.ws.resolve(ref), split)
        if key not in self._recorded:
            self._recorded = {key: find_evaluation(self.ws, key[0], self.fingerprint(key[0], split))}
        return self._recorded[key]

    def evaluate(
        self,
        ref: str,
        split: Split,
        description: str,
        first_repeat: int = 0,
        cached: bool = True,
        tasks: list[Task] | None = None,
    ) -> Evaluated:
        """Run the agent with the skills at `ref` on every task of `split` (or on `tasks` of it),
        `repeats` times (`cached=False`: from scratch, neither reading nor writing the result
        cache)."""
        setup = self.setup(split, first_repeat)
        tree = self.skills_id(ref)
        fingerprint = setup.fingerprint(tree)
        runs = []
        for repeat in range(setup.first_repeat, setup.first_repeat + setup.repeats):
            label = description
            if setup.repeats != 1:
                label = f"{description} (repeat {repeat + 1 - setup.first_repeat}/{setup.repeats})"
            key = digest([fingerprint, repeat]) if cached else None
            runs.append(self.run_tasks(split, ref, label, key, self.config.seed + repeat, tasks))
        evaluation = per_task_outcomes(runs).evaluation(fingerprint, setup.id, tree)
        return Evaluated(evaluation, setup, runs)

    def run_tasks(
        self,
        split: Split,
        ref: str,
        description: str,
        cache_key: str | None,
        seed: int,
        tasks: list[Task] | None = None,
    ) -> list[Trajectory]:
        """Every task of `split` (or `tasks` of it) with the skills at `ref`; finished tasks are
        cached under `cache_key` (a fingerprint), so a crash or a second look never recomputes
        them."""
        if split == "test" and self.test_sealed:
            raise WikiskillError("the test split is sealed: only a recorded look (eval --split test, uplift) scores it")
        tasks = self.benchmark.tasks(split) if tasks is None else tasks
        cache = ResultCache(self.ws.state_dir, cache_key) if cache_key else None
        skills = self.skills_at(ref)
        shelf = WikiShelf.from_files(self.ws.read_files(ref, "wiki")) if self.config.agent.wiki_access else None
        recipe = AgentRecipe(self.config, tuple(skills), seed, shelf)
        with tasks_span(split, ref, len(tasks)), self.reporter.tasks(description, len(tasks)) as on_done:
            return self.executor.run(recipe, tasks, self.config.concurrency, self.meter, cache, on_done)

    def train_results(self, round_number: int) -> list[Trajectory]:
        """The round's train trajectories on main. Maintain and propose both read them, so the
        last ones read are kept with their folder's tree id and reused while it is unchanged."""
        folder = f"raw/{round_label(round_number)}/train"
        tree = self.ws.tree_id(MAIN, folder)
        if self._train_results[0] != tree:
            files = self.ws.read_files(MAIN, folder)
            self._train_results = (
                tree,
                [
                    Trajectory.model_validate_json(text)
                    for path, text in sorted(files.items())
                    if path.endswith(".json")
                ],
            )
        return list(self._train_results[1])

    # -- committing -----------------------------------------------------------------------------

    def begin_step(self) -> None:
        """Start counting the cost of a step (its commit carries what was spent since)."""
        self._step_start = self.meter.total
        self._step_roles = self.meter.snapshot()

    def commit(
        self,
        subject: str,
        trailers: Trailers,
        changes: dict[str, str | None] | None = None,
        body: str = "",
        branch: str = MAIN,
        base: str | None = None,
        extra_parents: tuple[str, ...] = (),
    ) -> str:
        total = self.meter.total
        costed = trailers.model_copy(
            update={
                "cost_usd": total.cost_usd - self._step_start.cost_usd,
                "tokens": total.tokens - self._step_start.tokens,
            }
        )
        for key, value in self._role_trailers().items():
            setattr(costed, key, value)
        changes, linked = self._leave_links_alone(changes or {}, base or self.ws.head(branch))
        if linked:
            body = "\n".join(
                filter(None, [body, *(f"- left alone, not written: {path} is a symbolic link" for path in linked)])
            )
        message = format_message(subject, costed, body)
        annotate(**{key: getattr(costed, key) for key in TRACED_TRAILERS})
        return self.ws.commit(changes, message, branch=branch, base=base, extra_parents=extra_parents)

    def _leave_links_alone(
        self, changes: dict[str, str | None], ref: str | None
    ) -> tuple[dict[str, str | None], list[str]]:
        """`changes` without those to a symbolic link in wiki/ or skills/ (or to a path through
        one): a person's link is never replaced, and what it points at is never written."""
        links = {path for folder in LINTED for path in self.ws.links(ref, folder)} if ref else set()
        if not links:
            return changes, []
        linked = sorted(path for path in changes if any(path == link or path.startswith(f"{link}/") for link in links))
        return {path: text for path, text in changes.items() if path not in linked}, linked

    def _role_trailers(self) -> dict[str, str]:
        """`Cost-<Role>-USD` and `Tokens-<Role>` of each role that made calls in this step, and
        `Cached-<Role>` where its provider read prompt tokens from its cache."""
        trailers = {}
        for role, usage in sorted(self.meter.snapshot().items()):
            before = self._step_roles.get(role, Usage())
            if usage.calls > before.calls:
                cost, tokens = role_keys(role)
                trailers[cost] = f"{usage.cost_usd - before.cost_usd:.6f}"
                trailers[tokens] = str(usage.tokens - before.tokens)
                if usage.cached_tokens > before.cached_tokens:
                    trailers[role_cached_key(role)] = str(usage.cached_tokens - before.cached_tokens)
        return trailers
