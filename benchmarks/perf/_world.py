"""A scripted OpenAI-compatible world for the suites of `_common.qa_suite`, served in its own
process by `python -m wikiskill.testing.fakeserver --handler _world:handler`.

The task agent answers "3" (right) except for every fifth question (wrong), the maintainer writes
one pattern page citing the first trace it was shown, and the proposer reads four traces then
creates a skill that changes nothing.
"""

from __future__ import annotations

import json
import re

from wikiskill.testing.fakeserver import Reply

MAINTAINER = {
    "create_patterns": [
        {
            "name": "miscounted-letters",
            "summary": "wrong counts + skimming + count one letter at a time",
            "content": "# Miscounted letters\n\n## Description\nSome counts are off.\n\n"
            "## Root cause\nThe agent skims.\n\n## Evidence\nSHOWN-TASK answered 4.\n\n"
            "## Fix\nCount one letter at a time.\n",
        }
    ],
    "update_patterns": [],
    "append_log": "Found miscounted letters.",
}
SKILL = (
    "---\nname: count-letters\ndescription: Use when counting letters: count one at a time.\n---\n\n"
    "## When to Apply\n"
    "Counting letters.\n\n## When NOT to Apply\nAnything else.\n\n## Instructions\n1. Count slowly.\n"
)
PROPOSAL = {
    "action": "create",
    "name": "count-letters",
    "skill_md": SKILL,
    "purpose_md": "# count-letters\n\n## Origin\nMiscounts.\n",
    "rationale": "counts are off",
}


def handler(body: dict) -> Reply | str:
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if system.startswith("You are a Wiki Maintainer Agent"):
        shown = re.search(r"^# Trace (\S+)", messages[1]["content"], re.MULTILINE)
        return json.dumps(MAINTAINER).replace("SHOWN-TASK", shown.group(1) if shown else "")
    if system.startswith("You are a Skill Proposer Agent"):
        reads = sum(1 for message in messages if message["role"] == "tool")
        if reads < 4:
            return Reply(tool_calls=[{"name": "read_file", "arguments": {"path": f"traces/train-{reads:05d}"}}])
        return Reply(tool_calls=[{"name": "finish", "arguments": {"proposal": PROPOSAL}}])
    number = int(re.search(r"\(#(\d+)\)", messages[-1]["content"]).group(1))
    return f"<answer>{4 if number % 5 == 0 else 3}</answer>"
