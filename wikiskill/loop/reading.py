"""The read context: what a step reads before it decides anything. The workspace's history (its
read side only), the settings with the gate's policy they give, the suite's tasks, and where
progress goes; nothing here runs a task, calls a model or writes a commit."""

from __future__ import annotations

from ..benchmarks import Benchmark, BenchmarkKind, Split, Task
from ..contracts.gate import GatePolicy
from ..contracts.running import Reporter
from ..core.config import Config
from ..knowledge.leakage import HeldOut, suite_held_out
from ..knowledge.skills import Skill, load_skills
from ..store.evaluations import skills_id
from ..store.reads import WorkspaceReads
from ..store.rounds import round_label
from ..store.traces import Trajectory
from ..store.workspace import MAIN
from .alpha_budget import Spend, budgeted, current_spend
from .gate_policies import gate_policy
from .settings import GateSettings


class Reader:
    def __init__(self, ws: WorkspaceReads, config: Config, benchmark: Benchmark, reporter: Reporter):
        self.ws = ws
        self.config = config
        self.benchmark = benchmark
        self.reporter = reporter
        self._policy: tuple[GateSettings, GatePolicy] | None = None
        self._held_out: HeldOut | None = None
        self._train_results: tuple[str, list[Trajectory]] = ("", [])  # (tree id, trajectories)

    def tasks(self, split: Split) -> list[Task]:
        return self.benchmark.tasks(split)

    @property
    def interactive(self) -> bool:
        return self.benchmark.spec.kind is BenchmarkKind.INTERACTIVE

    def skills_at(self, ref: str) -> list[Skill]:
        return load_skills(self.ws.read_files(ref, "skills"))

    def skills_id(self, ref: str) -> str:
        return skills_id(self.ws, ref, self.config.agent.wiki_access)

    @property
    def held_out(self) -> HeldOut:
        """The runs of words of the val and test tasks a skill must not share (`skills.leak_run`)."""
        if self._held_out is None:
            self._held_out = suite_held_out(self.config, self.benchmark)
        return self._held_out

    @property
    def spend(self) -> Spend | None:
        """The next verdict's share of `gate.alpha_budget` (None without one: then main's ledger
        of gate commits is not read)."""
        settings = self.config.gate
        return None if settings.alpha_budget is None else current_spend(self.ws, settings)

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
