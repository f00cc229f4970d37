"""A scripted OpenAI-compatible world for the example-qa suite, served by FakeOpenAIServer.

- The task agent answers letter-counting questions right; it reverses words right only when
  its system prompt carries the SPELL marker, and then only for words of at most 6 letters.
  So a skill with the marker lifts val from 0.500 to 0.833, and any other skill changes nothing.
- The maintainer returns a page about reversal slips, citing the first trace it was shown
  (`SHOWN-TASK` in a reply stands for that trace's task id).
- The proposer reads 4 traces (`trace_ids`, example-qa's by default), then proposes `proposals[round]`.
- `wikiskill doctor`'s probes get the tool call and the JSON object they ask for.
"""

from __future__ import annotations

import json
import re

from wikiskill.llm.doctor import DOCTOR_SYSTEM
from wikiskill.testing.fakeserver import Reply

SPELL = "SPELL-OUT-MARKER"
USELESS = "USELESS-MARKER"


def skill_md(name: str, marker: str) -> str:
    return (
        f"---\nname: {name}\ndescription: Spell the word letter by letter before answering.\n---\n\n"
        "## When to Apply\nA question asks to reverse or count letters of a word.\n\n"
        "## When NOT to Apply\nQuestions that are not about letters.\n\n"
        f"## Instructions\n1. Write the word with one letter per line.\n2. {marker}: read the lines bottom-up.\n"
    )


def create(name: str, marker: str) -> dict:
    return {
        "action": "create",
        "name": name,
        "skill_md": skill_md(name, marker),
        "purpose_md": f"# {name}\n\n## Origin\nReversal slips.\n\n"
        "## Patterns Addressed\n- [reversal-slips](../../wiki/patterns/reversal-slips.md)\n\n"
        "## Evolution History\n",
        "rationale": f"reversal tasks fail; {name} should fix them",
    }


DEFAULT_PROPOSALS = {1: create("spell-letters", SPELL), 2: create("Useless Hint", USELESS)}
REVERSAL_PAGE = (
    "# Reversal slips\n\n## Description\nThe agent reverses words wrongly.\n\n"
    "## Root cause\nIt reads the word as a whole.\n\n"
    "## Evidence\nSHOWN-TASK: answered the word unreversed.\n\n## Fix\nSpell it letter by letter.\n"
)
MAINTAINER_REPLY = {
    "create_patterns": [
        {
            "name": "reversal-slips",
            "summary": "words reversed wrongly + read as a whole + spell letter by letter",
            "evidence": ["SHOWN-TASK"],
            "content": REVERSAL_PAGE,
        }
    ],
    "update_patterns": [],
    "append_log": "Found reversal slips in the sampled failures.",
}


def true_answer(question: str) -> str:
    count = re.search(r"letter '(.)' occur in the word '(\w+)'", question)
    if count:
        return str(count.group(2).count(count.group(1)))
    word = re.search(r"Write the word '(\w+)' backwards", question).group(1)
    return word[::-1]


class ScriptedWorld:
    def __init__(
        self, proposals: dict | None = None, maintainer_reply: object = None, trace_ids: list[str] | None = None
    ):
        self.proposals = proposals or DEFAULT_PROPOSALS
        self.maintainer_reply = MAINTAINER_REPLY if maintainer_reply is None else maintainer_reply
        self.trace_ids = trace_ids or [f"train-{index:02d}" for index in range(4)]

    def __call__(self, body: dict) -> Reply | str:
        messages = body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        if system.startswith("You are a Wiki Maintainer Agent"):
            reply = self.maintainer_reply
            shown = re.search(r"^# Trace (\S+)", messages[1]["content"], re.MULTILINE)
            return (reply if isinstance(reply, str) else json.dumps(reply)).replace("SHOWN-TASK", shown.group(1))
        if system.startswith("You are a Skill Proposer Agent"):
            return self.propose(messages)
        if system.startswith(DOCTOR_SYSTEM):
            if body.get("tools") or "# Tools" in system:
                return Reply(tool_calls=[{"name": "report", "arguments": {"status": "ok"}}])
            return json.dumps({"status": "ok"})
        return self.answer(system, messages[-1]["content"])

    def answer(self, system: str, question: str) -> str:
        answer = true_answer(question)
        reversal = "backwards" in question
        if reversal and not (SPELL in system and len(answer) <= 6):
            answer = answer[::-1]  # the slip: returns the word unreversed
        return f"Let me think. <answer>{answer}</answer>"

    def propose(self, messages: list[dict]) -> Reply:
        round_number = int(re.search(r"Round (\d+)\.", messages[1]["content"]).group(1))
        reads = sum(1 for m in messages if m["role"] == "assistant")  # one call per turn, native or text
        if reads < 4:
            trace = self.trace_ids[reads % len(self.trace_ids)]
            return Reply(tool_calls=[{"name": "read_file", "arguments": {"path": f"traces/{trace}"}}])
        proposal = self.proposals.get(round_number, {"action": "no_action", "rationale": "nothing left to try"})
        return Reply(tool_calls=[{"name": "finish", "arguments": {"proposal": proposal}}])


def evolve_through_cli(runner, ws, base_url: str, rounds: int) -> None:
    """`wikiskill init` an example-qa workspace on the local server, then `evolve --rounds N`."""
    from wikiskill.cli import app

    for args in (
        ["init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model", "--api-base", base_url],
        ["-C", str(ws), "evolve", "--rounds", str(rounds)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output


def reversal_suite(path, val: int):
    """example-qa with `val` validation tasks that are all five-letter reversals: the SPELL skill
    fixes every one, any other skill none (a `jsonl:` suite at `path`)."""
    import shutil
    from pathlib import Path

    shutil.copytree(Path(__file__).resolve().parents[1] / "benchmarks/example-qa", path)
    rows = []
    for index in range(val):
        word = "".join(chr(97 + (index * 7 + letter * 3 + index // 26) % 26) for letter in range(5))
        rows.append(
            {
                "id": f"val-{index:03d}",
                "answer": word[::-1],
                "question": f"Write the word '{word}' backwards, letter by letter. Answer with the reversed word only.",
            }
        )
    (path / "val.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path
