"""`wikiskill compare A B`: two refs' skills on one split, task by task, with the uncertainty of
the difference. An evaluation that git records under the current fingerprint is read, not rerun;
otherwise finished tasks come from the result cache."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..benchmarks import Split
from ..contracts.gate import CostCheck
from ..loop.cost_gate import check_cost
from ..loop.evaluating import Evaluator
from ..loop.gate_policies import mean_interval, paired
from ..loop.settings import CostRule, CostUnit
from ..store.evaluations import Evaluation
from .differences import compare_caveat, verdict


class Change(StrEnum):
    FIXED = "fixed"
    BROKEN = "broken"
    BETTER = "better"
    WORSE = "worse"
    SAME = "same"


@dataclass(frozen=True)
class TaskRow:
    task: str
    a: float
    b: float
    a_cost: float | None = None
    b_cost: float | None = None
    """Each side's cost of the task in the gate's unit (`gate.cost_unit`), where recorded."""

    @property
    def change(self) -> Change:
        if self.b >= 1.0 > self.a:
            return Change.FIXED
        if self.a >= 1.0 > self.b:
            return Change.BROKEN
        return Change.BETTER if self.b > self.a else Change.WORSE if self.b < self.a else Change.SAME


@dataclass(frozen=True)
class Comparison:
    ref_a: str
    ref_b: str
    split: str
    a: Evaluation
    b: Evaluation
    rows: list[TaskRow]
    interval: tuple[float, float]
    confidence: float
    unit: CostUnit = CostUnit.TOKENS
    cost: CostCheck | None = None
    """B's per-task cost against A's, tested under `gate.cost` (`ignore`: the means alone,
    tested as `bound` would)."""
    repeats: int = 1
    policy: str = ""
    """The gate's settings, named where `caveat` says why the gate's numbers can differ."""

    @property
    def mean_diff(self) -> float:
        """B's mean minus A's: positive, B is better (see `history.differences`)."""
        return self.b.mean - self.a.mean

    def verdict(self) -> str:
        return verdict(self.ref_b, self.ref_a, self.mean_diff, self.interval, self.confidence)

    def caveat(self) -> str:
        return compare_caveat(self.split, len(self.rows), self.repeats, self.policy)

    def count(self, change: Change) -> int:
        return sum(row.change == change for row in self.rows)


def compare(evaluator: Evaluator, ref_a: str, ref_b: str, split: Split = "val", confidence: float = 0.95) -> Comparison:
    a, b = _evaluation(evaluator, ref_a, split), _evaluation(evaluator, ref_b, split)
    settings = evaluator.reader.config.gate
    unit = settings.cost_unit
    a_costs, b_costs = a.costs(unit), b.costs(unit)
    rows = [
        TaskRow(task, a_score, b_score, a_costs.get(task), b_costs.get(task)) for task, b_score, a_score in paired(b, a)
    ]
    interval = mean_interval([r.b - r.a for r in rows], confidence, settings.seed)
    if settings.cost is CostRule.IGNORE:
        settings = settings.model_copy(update={"cost": CostRule.BOUND})
    cost = check_cost(settings, b, a)
    return Comparison(
        ref_a, ref_b, split, a, b, rows, interval, confidence, unit, cost, settings.repeats, settings.policy
    )


def _evaluation(evaluator: Evaluator, ref: str, split: Split) -> Evaluation:
    evaluator.reader.ws.resolve(ref)
    recorded = evaluator.recorded(ref, split)
    if recorded is not None and recorded[1].size == len(evaluator.reader.tasks(split)):  # not a sequential part
        return recorded[1]
    return evaluator.evaluate(ref, split, f"{ref}: {split}").evaluation
