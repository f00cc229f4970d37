"""The workdir agent: does a task in its working directory with one `bash` tool, as mini-swe-agent
does, and says it is done with `finish(answer)`.

Its first prompt lists the working directory (`roles/workdir_listing.py`). Each command runs on
its own in the task's environment (`environments/`: a folder on this machine, under bubblewrap
when it is installed, or the task's container), killed after `timeout_s`, its output cut to
`output_chars`. Tools go native or as text, as the model layer settles;
`load_skill` and `read_wiki` sit beside `bash` where they are on. A reply without a tool call
ends the task, its text the final answer, unless nothing has been done yet (the working directory
is unchanged): then it gets one message saying how to act, since a small model's first reply is
often code written in the text. Under `agent.tool_protocol: bash_block` no tools are offered and
each reply's one ```bash block is the command (`roles/bash_block.py`); a reply without exactly one
block is told so, and `MAX_FORMAT_ERRORS` such replies in a row end the task. The trajectory comes
back unscored: whoever made the working directory scores what is in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..benchmarks import BenchmarkKind, Task
from ..contracts.roles import AgentParts
from ..core.config import SkillsSettings, ToolProtocol
from ..core.errors import ContextOverflow
from ..core.parts import TASK_AGENTS
from ..core.prompts import render
from ..environments.base import TaskEnvironment
from ..environments.host import HostFolder
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..knowledge.skillsblock import render_block, shown_skills
from ..llm.chat import ChatModel, Reply, ToolCall
from ..store.traces import Trajectory, Usage
from ..telemetry.spans import tool_call_span
from .agent import LookupTools
from .bash_block import FINISH_MARKER, bash_blocks, finished
from .workdir_listing import WorkdirSource, listing_of, render_listing

COMMAND_TIMEOUT_S = 60.0
OUTPUT_CHARS = 10_000
MAX_FORMAT_ERRORS = 3
"""Under the bash-block protocol, this many replies in a row without exactly one block end the task."""

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run one bash command in the task's working directory; returns its exit code and output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command."}},
            "required": ["command"],
        },
    },
}
FINISH_TOOL = {
    "type": "function",
    "function": {
        "name": "finish",
        "description": "End the task with your final answer (what you changed, or the answer asked for).",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "The final answer."}},
            "required": ["answer"],
        },
    },
}


@dataclass
class _Turn:
    """What one reply came to: the messages it gets back, or the end of the task."""

    answers: list[dict]
    done: bool = False
    prediction: str | None = None


@TASK_AGENTS.builtin
class ShellAgent:
    """Follows `protocols.WorkdirAgent` on a host folder and `protocols.EnvironmentAgent` in any
    task environment (a Harbor task's container)."""

    name: str
    plays = BenchmarkKind.WORKDIR

    @classmethod
    def from_parts(cls, parts: AgentParts) -> ShellAgent:
        agent = parts.config.agent
        return cls(
            parts.model, parts.skills, parts.config.skills, agent.max_steps, parts.shelf, protocol=agent.tool_protocol
        )

    def __init__(
        self,
        model: ChatModel,
        skills: list[Skill],
        settings: SkillsSettings,
        max_steps: int,
        shelf: WikiShelf | None = None,
        timeout_s: float = COMMAND_TIMEOUT_S,
        output_chars: int = OUTPUT_CHARS,
        sandbox: bool = True,
        protocol: ToolProtocol = ToolProtocol.AUTO,
    ):
        self.model = model
        self.skills = skills
        self.settings = settings
        self.max_steps = max_steps
        self.blocks = protocol == ToolProtocol.BASH_BLOCK
        self.lookups = LookupTools(skills, settings, None if self.blocks else shelf)
        self.timeout_s = timeout_s
        self.output_chars = output_chars
        self.sandbox = sandbox

    async def play(self, task: Task, workdir: Path) -> Trajectory:
        return await self.play_in(task, HostFolder(workdir, self.sandbox))

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        """The task played with its commands run in `environment`."""
        shown = shown_skills(self.skills, self.settings, task.question)
        folder = listing_of(environment)
        system = render(
            "agent_workdir_bash" if self.blocks else "agent_workdir",
            skills_block=render_block(shown, self.settings),
            timeout_s=self.timeout_s,
            sandboxed=environment.sandboxed,
            finish_marker=FINISH_MARKER,
        )
        listing = render_listing(await folder.entries())
        first = render("agent_workdir_task", question=task.question.strip(), listing=listing)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": first.strip()}]
        episode = _Episode(folder, await folder.state())
        tools = None if self.blocks else [BASH_TOOL, FINISH_TOOL, *self.lookups.tools]
        usage = Usage()
        prediction, error = None, None
        for _ in range(self.max_steps):
            try:
                reply = await self.model.acomplete(messages, tools)
            except ContextOverflow as exc:  # this task fails alone; the others still run
                error = str(exc)
                break
            usage = usage + reply.usage
            messages.append(reply.message())
            turn = await (
                self._block_turn(reply, environment, episode)
                if self.blocks
                else self._tool_turn(reply, environment, episode)
            )
            messages += turn.answers
            if turn.done:
                prediction = turn.prediction
                break
        else:
            error = f"no finish after {self.max_steps} steps"
        return Trajectory(
            task_id=task.id,
            split=task.split,
            kind=BenchmarkKind.WORKDIR,
            question=task.question,
            messages=messages[1:],
            prediction=prediction,
            expected=task.answer,
            usage=usage,
            skills=[s.name for s in shown],
            error=error,
        )

    async def _tool_turn(self, reply: Reply, environment: TaskEnvironment, episode: _Episode) -> _Turn:
        if not reply.tool_calls:
            text = (reply.content or "").strip()
            if episode.nudged or await episode.changed():
                return _Turn([], done=True, prediction=text)
            episode.nudged = True
            return _Turn([{"role": "user", "content": render("agent_workdir_nudge").strip()}])
        answers = [
            {"role": "tool", "tool_call_id": call.id, "content": await self._traced_answer(call, environment)}
            for call in reply.tool_calls
        ]
        finish = next((call for call in reply.tool_calls if call.name == FINISH_TOOL["function"]["name"]), None)
        if finish is not None:
            return _Turn(answers, done=True, prediction=str((finish.arguments or {}).get("answer", "")).strip())
        return _Turn(answers)

    async def _block_turn(self, reply: Reply, environment: TaskEnvironment, episode: _Episode) -> _Turn:
        commands = bash_blocks(reply.content)
        if len(commands) != 1 or not commands[0].strip():
            episode.format_errors += 1
            if episode.format_errors >= MAX_FORMAT_ERRORS:
                return _Turn([], done=True, prediction=(reply.content or "").strip())
            message = render(
                "agent_workdir_format",
                count=len(commands),
                empty=len(commands) == 1,
                finish_marker=FINISH_MARKER,
                last=episode.format_errors == MAX_FORMAT_ERRORS - 1,
            )
            return _Turn([{"role": "user", "content": message.strip()}])
        episode.format_errors = 0
        result = await environment.run(commands[0], self.timeout_s, self.output_chars)
        answer = finished(result.output)
        if answer is not None:
            return _Turn([], done=True, prediction=answer)
        return _Turn([{"role": "user", "content": result.render(self.timeout_s)}])

    async def _traced_answer(self, call: ToolCall, environment: TaskEnvironment) -> str:
        with tool_call_span(call.name):
            return await self._answer(call, environment)

    async def _answer(self, call: ToolCall, environment: TaskEnvironment) -> str:
        if call.name == FINISH_TOOL["function"]["name"]:
            return "Finished."
        if call.name in self.lookups.names:
            return self.lookups.answer(call.name, call.arguments)
        if call.name != BASH_TOOL["function"]["name"]:
            names = ", ".join(tool["function"]["name"] for tool in [BASH_TOOL, FINISH_TOOL, *self.lookups.tools])
            return (
                f"Unknown tool {call.name!r}: the tools are {names}. A function in the task's files is no tool: "
                "read and change the files with bash commands."
            )
        command = (call.arguments or {}).get("command")
        if not isinstance(command, str) or not command.strip():
            return "bash needs a `command`: the shell command to run."
        result = await environment.run(command, self.timeout_s, self.output_chars)
        return result.render(self.timeout_s)


class _Episode:
    """What one task's turns share: whether the working directory changed since the start, and
    the messages already spent on replies that did not act."""

    def __init__(self, folder: WorkdirSource, start: str):
        self.folder = folder
        self.start = start
        self.nudged = False
        self.format_errors = 0

    async def changed(self) -> bool:
        return await self.folder.state() != self.start
