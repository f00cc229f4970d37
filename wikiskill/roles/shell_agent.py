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
block is told so, and `MAX_FORMAT_ERRORS` such replies in a row end the task.

A reply may also change files in its text, in Aider's edit formats (`agent.edit_format`: a
fenced block holding a whole file, or SEARCH/REPLACE blocks; `roles/edit_blocks.py`), applied in
the task's environment (`roles/file_edits.py`) and answered with their diffs. The same action
with the same result three times in a row gets one message, a fourth ends the task as
`failure: stuck` (`roles/stuck.py`). The trajectory comes back unscored: whoever made the
working directory scores what is in it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..benchmarks import BenchmarkKind, Task
from ..contracts.roles import AgentParts
from ..core.errors import ContextOverflow
from ..core.parts import TASK_AGENT
from ..core.prompts import render
from ..environments.base import TaskEnvironment
from ..environments.host import HostFolder
from ..knowledge.settings import SkillsSettings
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..knowledge.skillsblock import render_block, shown_skills
from ..llm.chat import ChatModel, Message, Reply, ToolCall, ToolSpec
from ..store.traces import FailureKind, FileEdit, Trajectory, Usage
from ..telemetry.spans import tool_call_span
from .agent import LookupTools
from .bash_block import FINISH_MARKER, bash_blocks, finished
from .edit_blocks import SearchReplace, WholeFile, search_replaces, whole_files
from .file_edits import FileEditor
from .settings import EditFormat, ToolProtocol
from .stuck import StuckDetector, Verdict
from .workdir_listing import WorkdirSource, listing_of, render_listing

COMMAND_TIMEOUT_S = 60.0
OUTPUT_CHARS = 10_000
MAX_FORMAT_ERRORS = 3
"""Under the bash-block protocol, this many replies in a row without exactly one block end the task."""

BASH_TOOL: ToolSpec = {
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
FINISH_TOOL: ToolSpec = {
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

    answers: list[Message]
    done: bool = False
    prediction: str | None = None
    action: str = ""
    """What the reply did (its calls, command or edits), for the stuck detector; empty when it did nothing."""
    shown: str = ""
    """The action as the model is told it when it repeats."""


@TASK_AGENT.builtin
class ShellAgent:
    """Follows `protocols.WorkdirAgent` on a host folder and `protocols.EnvironmentAgent` in any
    task environment (a Harbor task's container)."""

    name: str
    plays = BenchmarkKind.WORKDIR

    @classmethod
    def from_parts(cls, parts: AgentParts) -> ShellAgent:
        agent = parts.config.agent
        return cls(
            parts.model,
            parts.skills,
            parts.config.skills,
            agent.max_steps,
            parts.shelf,
            protocol=agent.tool_protocol,
            edit_format=agent.edit_format,
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
        edit_format: EditFormat = EditFormat.AUTO,
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
        self.edit_format = EditFormat(edit_format)

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
            edit_format=self.edit_format.value,
            edits_block=""
            if self.edit_format is EditFormat.TOOLS
            else render("agent_workdir_edits", edit_format=self.edit_format.value).strip(),
        )
        entries = await folder.entries()
        first = render("agent_workdir_task", question=task.question.strip(), listing=render_listing(entries))
        messages = [{"role": "system", "content": system}, {"role": "user", "content": first.strip()}]
        editor = FileEditor(environment, [entry.path for entry in entries], task.question)
        episode = _Episode(folder, await folder.state(), editor)
        tools = None if self.blocks else [BASH_TOOL, FINISH_TOOL, *self.lookups.tools]
        usage = Usage()
        prediction, error, failure = None, None, None
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
            result = "\n".join(str(answer.get("content")) for answer in turn.answers)
            verdict = episode.stuck.see(turn.action, result) if turn.action else Verdict.GO_ON
            if verdict is Verdict.STOP:
                error = f"stuck: the same action with the same result {episode.stuck.repeats} times in a row"
                failure = FailureKind.STUCK
                break
            if verdict is Verdict.WARN:
                messages.append({"role": "user", "content": self._stuck_message(turn.shown, episode)})
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
            failure=failure,
            edits=episode.edits,
        )

    def _stuck_message(self, shown: str, episode: _Episode) -> str:
        return render(
            "agent_workdir_stuck",
            action=shown if len(shown) <= 300 else shown[:300] + " ...",
            times=episode.stuck.repeats,
            changed=episode.edits != [],
            edit_format=self.edit_format.value,
            blocks=self.blocks,
            finish_marker=FINISH_MARKER,
        ).strip()

    def _text_edits(self, content: str | None, acted: bool) -> list[WholeFile | SearchReplace]:
        """The edits a reply wrote in its text, as `edit_format` takes them; `acted`: the reply
        also made a tool call (or, under the bash-block protocol, holds its one command)."""
        if self.edit_format is EditFormat.TOOLS or (self.edit_format is EditFormat.AUTO and acted):
            return []
        if self.edit_format is EditFormat.WHOLE:
            return list(whole_files(content))
        if self.edit_format is EditFormat.DIFF:
            return list(search_replaces(content))
        return list(search_replaces(content) or whole_files(content))

    async def _applied(self, edits: list[WholeFile | SearchReplace], episode: _Episode) -> tuple[list[Message], bool]:
        """The edits applied in order, answered in one message as a tool result would be, and
        whether every one of them left its file as it was."""
        if not edits:
            return [], False
        results = [await episode.editor.apply(edit) for edit in edits]
        episode.edits += [applied.edit for applied in results if applied.edit is not None]
        answer = {"role": "user", "content": "\n\n".join(applied.message for applied in results)}
        return [answer], all(applied.unchanged for applied in results)

    async def _tool_turn(self, reply: Reply, environment: TaskEnvironment, episode: _Episode) -> _Turn:
        edits = self._text_edits(reply.content, bool(reply.tool_calls))
        text = (reply.content or "").strip()
        if not reply.tool_calls and edits:
            answers, unchanged = await self._applied(edits, episode)
            if unchanged and await episode.changed():  # the work written out again: the model is done
                return _Turn(answers, done=True, prediction=text)
            return _Turn(answers, action=_edits_action(edits), shown=_edits_shown(edits))
        if not reply.tool_calls:
            if episode.nudged or await episode.changed():
                return _Turn([], done=True, prediction=text)
            episode.nudged = True
            nudge = render("agent_workdir_nudge", edit_format=self.edit_format.value).strip()
            return _Turn([{"role": "user", "content": nudge}])
        answers = [
            {"role": "tool", "tool_call_id": call.id, "content": await self._traced_answer(call, environment)}
            for call in reply.tool_calls
        ]
        answers += (await self._applied(edits, episode))[0]
        finish = next((call for call in reply.tool_calls if call.name == FINISH_TOOL["function"]["name"]), None)
        if finish is not None:
            return _Turn(answers, done=True, prediction=str((finish.arguments or {}).get("answer", "")).strip())
        calls = [{"name": call.name, "arguments": call.arguments} for call in reply.tool_calls]
        action = json.dumps(calls, sort_keys=True, default=str) + (_edits_action(edits) if edits else "")
        shown = "; ".join(
            [*(_call_shown(call) for call in reply.tool_calls), *([_edits_shown(edits)] if edits else [])]
        )
        return _Turn(answers, action=action, shown=shown)

    async def _block_turn(self, reply: Reply, environment: TaskEnvironment, episode: _Episode) -> _Turn:
        commands = bash_blocks(reply.content)
        one = len(commands) == 1 and bool(commands[0].strip())
        edits = self._text_edits(reply.content, one) if one or not commands else []
        if not one and not edits:
            episode.format_errors += 1
            if episode.format_errors >= MAX_FORMAT_ERRORS:
                return _Turn([], done=True, prediction=(reply.content or "").strip())
            message = render(
                "agent_workdir_format",
                count=len(commands),
                empty=len(commands) == 1,
                finish_marker=FINISH_MARKER,
                last=episode.format_errors == MAX_FORMAT_ERRORS - 1,
                edit_format=self.edit_format.value,
            )
            return _Turn([{"role": "user", "content": message.strip()}])
        episode.format_errors = 0
        answers, unchanged = await self._applied(edits, episode)
        action, shown = (_edits_action(edits), _edits_shown(edits)) if edits else ("", "")
        if not one:
            if unchanged and await episode.changed():
                return _Turn(answers, done=True, prediction=(reply.content or "").strip())
            return _Turn(answers, action=action, shown=shown)
        result = await environment.run(commands[0], self.timeout_s, self.output_chars)
        answer = finished(result.output)
        if answer is not None:
            return _Turn(answers, done=True, prediction=answer)
        output = result.render(self.timeout_s)
        if answers:
            output = f"{answers[0]['content']}\n\n{output}"
        shown = "; ".join([f"`{commands[0].strip()}`", *([shown] if shown else [])])
        return _Turn([{"role": "user", "content": output}], action=commands[0] + action, shown=shown)

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


def _edits_action(edits: list[WholeFile | SearchReplace]) -> str:
    return json.dumps([vars(edit) for edit in edits], sort_keys=True)


def _edits_shown(edits: list[WholeFile | SearchReplace]) -> str:
    files = ", ".join(dict.fromkeys(edit.path or "the task's file" for edit in edits))
    return f"the same edit of {files} written in your reply"


def _call_shown(call: ToolCall) -> str:
    command = (call.arguments or {}).get("command")
    if call.name == BASH_TOOL["function"]["name"] and isinstance(command, str):
        return f"`{command.strip()}`"
    return f"{call.name}({call.raw_arguments})"


@dataclass
class _Episode:
    """What one task's turns share: whether the working directory changed since the start, the
    messages already spent on replies that did not act, the edits made from replies' text, and
    how often the last action repeated."""

    folder: WorkdirSource
    start: str
    editor: FileEditor
    nudged: bool = False
    format_errors: int = 0
    edits: list[FileEdit] = field(default_factory=list)
    stuck: StuckDetector = field(default_factory=StuckDetector)

    async def changed(self) -> bool:
        return await self.folder.state() != self.start
