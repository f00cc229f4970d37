"""Rich progress for long steps: one bar per step with tasks done, score so far and cost so far."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..store.traces import Trajectory, Usage
from .progress_file import turn_line


class RichReporter:
    def __init__(self, console: Console):
        self.console = console
        self._preparing: Progress | None = None

    def preparing(self, done: int, total: int) -> None:
        """A bar for one-off preparation, shown from its start (0 done) until it ends, with the time
        it expects to take; a plain line first says what is being made, where a bar is not drawn."""
        if self._preparing is None:
            self.console.print(
                f"Generating {total} game(s) before their tasks can run (once; later runs reuse them).",
                markup=False,
                highlight=False,
            )
            self._preparing = Progress(
                TextColumn("generating games"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self._preparing.add_task("prepare", total=total)
            self._preparing.start()
        self._preparing.update(self._preparing.task_ids[0], completed=done, total=total)
        if done >= total:
            self._preparing.stop()
            self._preparing = None

    def info(self, message: str) -> None:
        self.console.print(f"[dim]{message}[/dim]")

    def turn(self, description: str, turn: int, usage: Usage) -> None:
        self.console.print(f"[dim]{turn_line(description, turn, usage)}[/dim]")

    @contextmanager
    def tasks(self, description: str, total: int) -> Iterator[Callable[[Trajectory], None]]:
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("score {task.fields[score]:.3f}  ${task.fields[cost]:.4f}"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=self.console, transient=False) as progress:
            bar = progress.add_task(description, total=total, score=0.0, cost=0.0)
            scores: list[float] = []
            cost = 0.0

            def done(trajectory: Trajectory) -> None:
                nonlocal cost
                scores.append(trajectory.score)
                cost += trajectory.usage.cost_usd
                progress.update(bar, advance=1, score=sum(scores) / len(scores), cost=cost)

            yield done
