"""The workdir agent: does a task in its working directory with one `bash` tool, as mini-swe-agent
does, and says it is done with `finish(answer)`.

Each command runs on its own in the task's environment (`environments/`: a host folder under
bubblewrap when it is installed, or the task's container), killed after `timeout_s`, its output
cut to `output_chars`. Tools go native or as
text, as the model layer settles; `load_skill` and `read_wiki` sit beside `bash` where they are
on. A reply without a tool call also ends the task, its text the final answer. The trajectory
comes back unscored: whoever made the working directory scores what is in it.
"""

from __future__ import annotations

from pathlib import Path

from ..benchmarks import BenchmarkKind, Task
from ..core.config import SkillsSettings
from ..core.errors import ContextOverflow
from ..core.prompts import render
from ..environments.base import TaskEnvironment
from ..environments.host import HostFolder
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..knowledge.skillsblock import render_block, shown_skills
from ..llm.chat import ChatModel, ToolCall
from ..store.traces import Trajectory, Usage
from .agent import LookupTools

COMMAND_TIMEOUT_S = 60.0
OUTPUT_CHARS = 10_000

BASH_TOOL = {"type": "function", "function": {
    "name": "bash",
    "description": "Run one bash command in the task's working directory; returns its exit code and output.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string", "description": "The command."}},
                   "required": ["command"]},
}}
FINISH_TOOL = {"type": "function", "function": {
    "name": "finish",
    "description": "End the task with your final answer (what you changed, or the answer asked for).",
    "parameters": {"type": "object", "properties": {"answer": {"type": "string", "description": "The final answer."}},
                   "required": ["answer"]},
}}


class ShellAgent:
    """Follows `protocols.WorkdirAgent`."""

    def __init__(self, model: ChatModel, skills: list[Skill], settings: SkillsSettings, max_steps: int,
                 shelf: WikiShelf | None = None, timeout_s: float = COMMAND_TIMEOUT_S,
                 output_chars: int = OUTPUT_CHARS, sandbox: bool = True):
        self.model = model
        self.skills = skills
        self.settings = settings
        self.max_steps = max_steps
        self.lookups = LookupTools(skills, settings, shelf)
        self.timeout_s = timeout_s
        self.output_chars = output_chars
        self.sandbox = sandbox

    async def play(self, task: Task, workdir: Path) -> Trajectory:
        return await self.play_in(task, HostFolder(workdir, self.sandbox))

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        """The task played with its commands run in `environment`."""
        shown = shown_skills(self.skills, self.settings, task.question)
        system = render("agent_workdir", skills_block=render_block(shown, self.settings), timeout_s=self.timeout_s,
                        sandboxed=environment.sandboxed)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": task.question}]
        tools = [BASH_TOOL, FINISH_TOOL, *self.lookups.tools]
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
            if not reply.tool_calls:
                prediction = (reply.content or "").strip()
                break
            for call in reply.tool_calls:
                answer = await self._answer(call, environment)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
            finish = next((call for call in reply.tool_calls if call.name == FINISH_TOOL["function"]["name"]), None)
            if finish is not None:
                prediction = str((finish.arguments or {}).get("answer", "")).strip()
                break
        else:
            error = f"no finish after {self.max_steps} steps"
        return Trajectory(task_id=task.id, split=task.split, kind=BenchmarkKind.WORKDIR, question=task.question,
                          messages=messages[1:], prediction=prediction, expected=task.answer, usage=usage,
                          skills=[s.name for s in shown], error=error)

    async def _answer(self, call: ToolCall, environment: TaskEnvironment) -> str:
        if call.name == FINISH_TOOL["function"]["name"]:
            return "Finished."
        if call.name in self.lookups.names:
            return self.lookups.answer(call.name, call.arguments)
        if call.name != BASH_TOOL["function"]["name"]:
            return f"Unknown tool {call.name!r}: use bash or finish."
        command = (call.arguments or {}).get("command")
        if not isinstance(command, str) or not command.strip():
            return "bash needs a `command`: the shell command to run."
        result = await environment.run(command, self.timeout_s, self.output_chars)
        return result.render(self.timeout_s)
