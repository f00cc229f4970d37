"""The agents that check a Harbor suite instead of playing it (`agent.runner: oracle | nop`):
`oracle` copies the task's `solution/` into the container as `/solution` and runs `solve.sh`
there with the task's `[solution.env]`, as Harbor's oracle agent does; `nop` does nothing. A
sound suite scores them 1 and 0."""

from __future__ import annotations

from pathlib import Path

from ..benchmarks import BenchmarkKind, Task
from ..benchmarks.harbor import AGENT_TIMEOUT_KEY, SOLUTION_DIR, SOLVE_SCRIPT, TASK_DIR_KEY, read_task
from ..benchmarks.harbor_env import exports, resolve_env
from ..contracts.roles import AgentParts
from ..core.parts import REFERENCE_AGENT
from ..environments.base import TaskEnvironment
from ..llm.chat import Message
from ..store.traces import Trajectory

SOLUTION_MOUNT = "/solution"
OUTPUT_CHARS = 10_000


@REFERENCE_AGENT.builtin
class OracleAgent:
    """Follows `protocols.ReferenceAgent`: runs the task's `solution/solve.sh`."""

    name: str

    @classmethod
    def from_parts(cls, parts: AgentParts) -> OracleAgent:
        """The oracle needs none of the parts: the solution is the task's."""
        return cls()

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        solution = Path(task.metadata[TASK_DIR_KEY]) / SOLUTION_DIR
        if not (solution / SOLVE_SCRIPT).is_file():
            return _trajectory(task, error=f"{solution / SOLVE_SCRIPT} is missing: the oracle has nothing to run")
        timeout_s = float(task.metadata[AGENT_TIMEOUT_KEY])
        env = resolve_env(read_task(solution.parent).config.solution.env, f"{task.id}: [solution.env]")
        await environment.copy_in(solution, SOLUTION_MOUNT)
        command = f"{exports(env)}bash {SOLUTION_MOUNT}/{SOLVE_SCRIPT}"
        result = await environment.run(command, timeout_s, OUTPUT_CHARS)
        error = None if result.exit_code == 0 else f"solve.sh: {result.render(timeout_s).splitlines()[0]}"
        said = f"$ bash {SOLUTION_MOUNT}/{SOLVE_SCRIPT}\n{result.render(timeout_s)}"
        return _trajectory(task, messages=[{"role": "assistant", "content": said}], error=error)


@REFERENCE_AGENT.builtin
class NopAgent:
    """Follows `protocols.ReferenceAgent`: leaves the container as it started."""

    name: str

    @classmethod
    def from_parts(cls, parts: AgentParts) -> NopAgent:
        """Doing nothing needs none of the parts."""
        return cls()

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        return _trajectory(task)


def _trajectory(task: Task, messages: list[Message] | None = None, error: str | None = None) -> Trajectory:
    return Trajectory(
        task_id=task.id,
        split=task.split,
        kind=BenchmarkKind.WORKDIR,
        question=task.question,
        messages=messages or [],
        error=error,
    )
