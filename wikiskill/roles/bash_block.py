"""The bash-block protocol (`agent.tool_protocol: bash_block`), mini-swe-agent's: no tools are
offered; each reply holds exactly one ```bash block, the command to run; its result goes back as
the next user message. A command whose output starts with the line `FINISH_MARKER` ends the task,
the rest of its output the final answer. Small models that never write a tool call can still
follow this, and a reply that does not gets told exactly what was wrong."""

from __future__ import annotations

import re

FINISH_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""The first line of a command's output that ends the task (mini-swe-agent's marker):
`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`."""
BLOCK = re.compile(r"```(?:bash|sh)[ \t]*\r?\n(.*?)\r?\n?```", re.DOTALL)


def bash_blocks(content: str | None) -> list[str]:
    """The commands of a reply's ```bash (or ```sh) blocks, in order."""
    return [match.group(1) for match in BLOCK.finditer(content or "")]


def finished(output: str) -> str | None:
    """The final answer when `output` starts with the finish marker, else None."""
    first, _, rest = output.lstrip().partition("\n")
    return rest.strip() if first.strip() == FINISH_MARKER else None
