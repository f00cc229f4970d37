"""Usage per role for one command, and the budget that stops it cleanly."""

from __future__ import annotations

import threading

from ..core.errors import BudgetExceeded
from ..roles.settings import Role
from ..store.traces import Usage
from .settings import BudgetSettings

_RESUME = "; finished tasks are kept: raise the budget in wikiskill.yaml and run the command again to continue"


class Meter:
    """Usage per role for one command, and the budget that stops it cleanly.

    The command's meter is the one ledger: workers elsewhere count on meters of their own and
    hand over what they counted (`drain`) with each result.
    """

    def __init__(self, budget: BudgetSettings | None = None, spent: Usage | None = None):
        self.budget = budget or BudgetSettings()
        self.before = spent or Usage()
        self.by_role: dict[Role, Usage] = {}
        self._lock = threading.Lock()

    def add(self, role: Role, usage: Usage) -> None:
        with self._lock:
            self.by_role[role] = self.by_role.get(role, Usage()) + usage

    @property
    def total(self) -> Usage:
        with self._lock:
            return sum(self.by_role.values(), Usage())

    def snapshot(self) -> dict[Role, Usage]:
        with self._lock:
            return dict(self.by_role)

    def drain(self) -> dict[Role, Usage]:
        """Usage per role counted since the last drain, and count afresh."""
        with self._lock:
            counted, self.by_role = self.by_role, {}
        return counted

    def spent(self) -> Usage:
        """What counts against the budget: earlier parts of the run plus every call since."""
        return self.before + self.total

    def check(self) -> None:
        """Raise BudgetExceeded once the run (including earlier, resumed parts) is over budget."""
        spent = self.spent()
        if self.budget.max_usd is not None and spent.cost_usd >= self.budget.max_usd:
            raise BudgetExceeded(
                f"budget reached: ${spent.cost_usd:.4f} of budget.max_usd ${self.budget.max_usd}{_RESUME}"
            )
        judge = self.snapshot().get(Role.JUDGE, Usage())
        if (
            self.budget.max_usd is not None
            and self.budget.judge_share is not None
            and judge.cost_usd >= self.budget.max_usd * self.budget.judge_share
        ):
            raise BudgetExceeded(
                f"budget reached: the judge spent ${judge.cost_usd:.4f}, its share "
                f"budget.judge_share {self.budget.judge_share} of budget.max_usd "
                f"${self.budget.max_usd}{_RESUME}"
            )
        if self.budget.max_calls is not None and spent.calls >= self.budget.max_calls:
            raise BudgetExceeded(
                f"budget reached: {spent.calls} of budget.max_calls {self.budget.max_calls} model calls{_RESUME}"
            )
