"""The skill proposer: a tool-calling loop that reads the wiki and traces, then proposes one skill
change. It reads through a sandboxed `Library` and returns the raw proposal with the whole
conversation as a transcript; the harness validates and applies the proposal.

Tool calls may come natively or written as text (see toolcalls.py); a reply with neither gets a
short correction, and a reply that is just a proposal object is taken as `finish`. Answers end
with the concrete next call to make, which small models follow where they ignore instructions.

The proposal `finish` submits is read with the schema its tool shows (`ProposalSchema`, also
the `response_format` of a text call where the server takes one): one that does not match is
answered with the parse error once, to repair; so is one the harness would refuse before
validation (`check`: a placeholder copied for a name, say). A second is taken as it is, for the
harness to record as invalid with that reason. A call that fails (a timeout, a server error) ends the
conversation without a proposal, with the reason, rather than the command.

Past `kept_results_tokens`, the results the proposer has already answered are sent as stubs
(`stub_used_results`); reading one again returns it again. The transcript keeps every message.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field

from ..contracts.roles import Library, ProposalCheck, ProposerContext, ProposerResult, TurnReport
from ..contracts.transcript import TranscriptCall
from ..core.errors import ModelError
from ..core.prompts import render
from ..knowledge.proposals import ACTIONS, CREATE_EXAMPLE, InvalidProposal, ProposalSchema, parse_proposal
from ..llm.chat import ChatModel, Message, Reply, ToolCall
from ..llm.context import stub_used_results
from ..llm.jsontext import json_objects
from ..llm.toolcalls import TEXT_CALL_PREFIX, tool_spec
from ..store.trailers import Parsed
from ..telemetry.spans import tool_call_span

RESULT_SUMMARY_CHARS = 200
CALL_FAILED = "the proposer's model call failed"
"""Starts the error of a conversation a failed model call ended (not the model's own doing)."""
INVALID_CALL = "Error: invalid call:"
"""Starts the answer to a call the model got wrong (as opposed to a read that found nothing)."""


class PathArgument(BaseModel):
    path: str = Field(description="a workspace path, e.g. wiki/index.md, wiki/patterns, traces/<task_id>")


TOOLS = [
    tool_spec(
        "read_file", "Read a workspace file: wiki/..., skills/..., or traces/<task_id> for a train trace.", PathArgument
    ),
    tool_spec(
        "list_files", "List the files under a workspace folder (wiki, wiki/patterns, skills, traces).", PathArgument
    ),
    tool_spec("finish", f"Submit your one proposal ({', '.join(ACTIONS[:-1])} or {ACTIONS[-1]}).", ProposalSchema),
]
TOOL_NAMES = ", ".join(tool["function"]["name"] for tool in TOOLS)
FINISH_ONLY = [tool for tool in TOOLS if tool["function"]["name"] == "finish"]
CORRECTION = (
    "Your reply did not call a tool. Call one of {names}: read what you need, then call `finish`. "
    "Without native tool calls, write the call as one JSON object, e.g. "
    '{{"name": "read_file", "arguments": {{"path": "wiki/index.md"}}}}.'
)


class Proposer:
    def __init__(
        self,
        model: ChatModel,
        library: Library,
        max_turns: int,
        min_trace_reads: int,
        kept_results_tokens: int | None = None,
        on_turn: TurnReport | None = None,
        check: ProposalCheck | None = None,
    ):
        self.model = model
        self.library = library
        self.max_turns = max_turns
        self.min_trace_reads = min_trace_reads
        self.kept_results_tokens = kept_results_tokens
        """Answered tool results kept in the prompt up to this many tokens, then stubbed; None: never."""
        self.on_turn = on_turn
        self.check = check
        self._trace_order: list[str] = []
        self._failures = 0
        self._read_ids: dict[str, str] = {}  # call id -> path read
        self._hidden: set[str] = set()  # paths whose every read is stubbed in the prompt sent
        self._repairing = False  # the model was shown why its proposal could not be taken
        self._prompt: list[Message] = []  # the system and user messages the conversation began with

    def run(self, context: ProposerContext) -> ProposerResult:
        messages = [
            {
                "role": "system",
                "content": render("proposer_system", min_trace_reads=self.min_trace_reads, max_turns=self.max_turns),
            },
            {"role": "user", "content": render("proposer_user", folder="prompts", **context.prompt_fields())},
        ]
        result = ProposerResult(proposal=None)
        result.transcript.messages = messages
        self._prompt = messages[:2]
        outcomes = sorted(context.outcomes, key=lambda row: bool(row.get("success")))
        self._trace_order = [f"traces/{row['id']}" for row in outcomes]  # failures first
        self._failures = sum(1 for row in outcomes if not row.get("success"))
        self._read_ids, self._hidden, self._repairing = {}, set(), False
        try:
            self._converse(messages, result)
        except ModelError as exc:  # a timeout, an overflow, a server error: no proposal, with the reason
            result.error = f"{CALL_FAILED}: {exc}"
        if result.parsed is None:
            result.parsed = Parsed.GAVE_UP
        result.transcript.outcome = result.proposal
        result.transcript.error = result.error
        return result

    def _converse(self, messages: list[Message], result: ProposerResult) -> None:
        """Turns until `finish` is accepted. Once enough traces are read, a repeated call or the
        last turn leaves only `finish` on offer: weak models otherwise read on until time runs out."""
        traces_read: set[str] = set()
        made: set[str] = set()
        repeated = False
        for turn in range(1, self.max_turns + 1):
            result.turns = turn
            finish_only = (repeated or turn == self.max_turns) and len(traces_read) >= self.min_trace_reads
            if finish_only:
                messages.append({"role": "user", "content": f"Time to finish. {self._next_step(result, traces_read)}"})
            reply = self.model.complete(self._sent(messages), FINISH_ONLY if finish_only else TOOLS, call_required=True)
            result.usage = result.usage + reply.usage
            if self.on_turn is not None:
                self.on_turn(turn, result.usage)
            record = result.transcript.add_turn(reply.content, reply.usage, reply.notes)
            messages.append(reply.message())
            calls = _numbered(reply.tool_calls or _bare_proposal(reply.content), turn)
            if not calls:
                record.error = "no tool call"
                messages.append({"role": "user", "content": CORRECTION.format(names=TOOL_NAMES)})
                continue
            messages[-1] = Reply(reply.content, calls).message()
            for call in calls:
                read = call.arguments if call.name == "read_file" and isinstance(call.arguments, dict) else {}
                path = read.get("path") if isinstance(read.get("path"), str) else None
                with tool_call_span(call.name):
                    answer, proposal = self._handle(call.name, call.arguments, traces_read, result)
                key = f"{call.name} {call.raw_arguments}"
                repeated = repeated or (key in made and path not in self._hidden)  # a stubbed read is no loop
                made.add(key)
                if isinstance(path, str):
                    self._read_ids[call.id] = path
                record.calls.append(
                    TranscriptCall(
                        name=call.name,
                        arguments=call.arguments,
                        result=answer[:RESULT_SUMMARY_CHARS],
                        protocol="text" if call.id.startswith(TEXT_CALL_PREFIX) else "native",
                    )
                )
                if answer.startswith(INVALID_CALL):
                    record.error = answer
                messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
                if proposal is not None or result.parsed == Parsed.GAVE_UP:
                    result.proposal = proposal
                    return
        result.error = f"the proposer did not call finish within {self.max_turns} turns"

    def _sent(self, messages: list[Message]) -> list[Message]:
        """The conversation as the model is sent it: answered results stubbed past the budget."""
        if self.kept_results_tokens is None:
            return messages
        sent, stubbed = stub_used_results(messages, self.kept_results_tokens)
        shown = {path for call_id, path in self._read_ids.items() if call_id not in stubbed}
        self._hidden = set(self._read_ids.values()) - shown
        return sent

    def _handle(
        self, name: str, arguments: dict[str, Any] | None, traces_read: set[str], result: ProposerResult
    ) -> tuple[str, dict[str, Any] | None]:
        if not isinstance(arguments, dict):
            return f"{INVALID_CALL} the arguments were not a JSON object.", None
        if name in ("read_file", "list_files"):
            path = arguments.get("path")
            if not isinstance(path, str):
                return f"{INVALID_CALL} `path` must be a string.", None
            try:
                if name == "list_files":
                    return "\n".join(self.library.list(path)) or "(empty)", None
                text, is_trace = self.library.read(path)
            except LookupError as exc:
                return f"Error: {exc.args[0] if exc.args else exc}. {self._next_step(result, traces_read)}", None
            again = path in result.reads and path not in self._hidden
            result.reads.append(path)
            if not is_trace:
                return (
                    f"You have read {path} already. {self._next_step(result, traces_read)}" if again else text
                ), None
            if text in traces_read:
                if path in self._hidden:
                    return text, None
                return f"You have read {path} already. {self._next_step(result, traces_read)}", None
            traces_read.add(text)  # by content: traces/x and raw/r001/train/x.json are one trace
            return (
                f"{text}\n\n[{len(traces_read)} trace(s) read; {self.min_trace_reads} needed before `finish`. "
                f"{self._next_step(result, traces_read)}]"
            ), None
        if name == "finish":
            if len(traces_read) < self.min_trace_reads:
                return (
                    f"Error: read at least {self.min_trace_reads} traces before finishing (you have read "
                    f"{len(traces_read)}). {self._next_step(result, traces_read)}"
                ), None
            proposal = _object(arguments.get("proposal", arguments))
            try:
                if not isinstance(proposal, dict):
                    raise InvalidProposal("`proposal` must be a JSON object.")
                parse_proposal(proposal)
                refused = self.check(proposal, self._prompt) if self.check is not None else None
                if refused is not None and not self._repairing:
                    raise InvalidProposal(refused)
            except InvalidProposal as invalid:
                if not self._repairing:
                    self._repairing = True
                    return f"{INVALID_CALL} {_sentence(invalid.reason)} Correct it and call finish again.", None
                result.parsed = Parsed.GAVE_UP
                result.error = f"the proposal did not match the schema after one repair: {invalid.reason}"
                return "Proposal received.", proposal if isinstance(proposal, dict) else None
            result.parsed = Parsed.REPAIRED if self._repairing else Parsed.FIRST
            return "Proposal received.", proposal
        return f"{INVALID_CALL} unknown tool {name!r}; use {TOOL_NAMES}.", None

    def _next_step(self, result: ProposerResult, traces_read: set[str]) -> str:
        """A concrete next call: weak models repeat a call (even a refused one) unless told
        exactly what to do next."""
        if len(traces_read) >= self.min_trace_reads:
            failed = ", ".join(path.removeprefix("traces/") for path in self._trace_order[: self._failures][:3])
            rationale = CREATE_EXAMPLE["rationale"].replace("the failures", failed or "the failures")
            example = {"name": "finish", "arguments": {"proposal": {**CREATE_EXAMPLE, "rationale": rationale}}}
            return (
                f"Next, call finish with your one proposal, e.g. {json.dumps(example)} (or a patch, or "
                "no_action if no change can help), or read a wiki page or another trace first if you need to."
            )
        unread = [path for path in self._trace_order if path not in result.reads]
        path = unread[0] if unread else "traces/<task_id>"
        return f'Next, call read_file with {{"path": "{path}"}}.'


def _bare_proposal(content: str | None) -> list[ToolCall]:
    """A reply that holds a proposal object (with an `action`) but no call: taken as `finish`."""
    try:
        for value in json_objects(content or ""):
            if isinstance(value, dict) and isinstance(value.get("action"), str):
                return [ToolCall(f"{TEXT_CALL_PREFIX}finish", "finish", {"proposal": value}, json.dumps(value))]
    except ValueError:
        pass
    return []


def _numbered(calls: list[ToolCall], turn: int) -> list[ToolCall]:
    """The calls with ids of our own (`<protocol prefix><turn>-<n>`): a provider's ids are random,
    and the transcript of the same conversation should be the same file."""
    return [
        replace(call, id=f"{TEXT_CALL_PREFIX if call.id.startswith(TEXT_CALL_PREFIX) else 'call-'}{turn}-{n}")
        for n, call in enumerate(calls, 1)
    ]


def _sentence(text: str) -> str:
    return text if text.endswith(".") else f"{text}."


def _object(value: object) -> object:
    """A proposal some models send as a JSON string instead of an object, decoded."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value
