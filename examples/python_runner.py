"""A task agent of your own for `wikiskill evolve`: one litellm call with the skills in the system
prompt. Put this file's folder on PYTHONPATH and name it in wikiskill.yaml:

    agent:
      runner: python:python_runner:solve

or pass `--agent python:python_runner:solve` to `init`, `evolve`, `eval` or `compare`. wikiskill
calls `solve` once per task with an `AgentRun` (the task, the skills block, a copy of the skills
as Agent Skills folders, an empty working directory, the agent's model settings) and scores the
answer it returns. Replace the body with your own agent; see docs/agents.md.
"""

from __future__ import annotations

import litellm

SYSTEM = (
    "Answer the user's question. Follow a skill below when it fits the task. Put the final "
    "answer alone in <answer></answer>.\n\n{skills}"
)


def solve(run) -> dict:
    """The final answer (wikiskill reads `<answer>` tags when present), the conversation and the usage."""
    messages = [
        {"role": "system", "content": SYSTEM.format(skills=run.skills_prompt)},
        {"role": "user", "content": run.task},
    ]
    response = litellm.completion(
        model=run.model,
        api_base=run.api_base,
        messages=messages,
        temperature=run.temperature,
        max_tokens=run.max_tokens,
    )
    answer = response.choices[0].message.content or ""
    usage = response.usage
    return {
        "answer": answer,
        "messages": [*messages, {"role": "assistant", "content": answer}],
        "usage": {"calls": 1, "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
    }
