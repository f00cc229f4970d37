"""What one command of a task's environment gives back, its output cut to a budget of characters
(the head and the tail, saying how much was cut between them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShellResult:
    exit_code: int | None
    """None when the command was killed for running out of time."""
    output: str
    """stdout and stderr together, cut to the budget."""
    timed_out: bool = False

    def render(self, timeout_s: float) -> str:
        """The tool result the model reads."""
        status = (
            f"killed after {timeout_s:g} s (the command's time limit)"
            if self.timed_out
            else f"exit code {self.exit_code}"
        )
        return f"{status}\n{self.output}" if self.output else f"{status}\n(no output)"


class OutputBudget:
    """Keeps the first and last `chars // 2` bytes of a stream of any length."""

    def __init__(self, chars: int):
        self.half = max(1, chars // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        del self.tail[: -self.half]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if cut <= 0:
            return head + tail
        return f"{head}\n[... {cut} bytes of output cut; the first and last {self.half} are shown ...]\n{tail}"
