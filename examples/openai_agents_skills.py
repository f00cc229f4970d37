"""A workspace's evolved skills in an OpenAI Agents SDK agent, through wikiskill's host API.

    pip install wikiskill openai-agents
    export OPENAI_API_KEY=...
    python examples/openai_agents_skills.py my-workspace "Add 250 g and 1.2 kg of flour." --model gpt-4o-mini

Against a local OpenAI-compatible server (llama.cpp, Ollama, vLLM, LM Studio) instead:

    python examples/openai_agents_skills.py my-workspace "..." --model qwen --base-url http://127.0.0.1:8080/v1

The agent's instructions carry the skills block of main (`index` mode: each skill's name and
description; the agent loads a skill's instructions with the `load_skill` tool when one fits). The
instructions are rendered on every run from a live view of main, so an agent that keeps running
picks up a skill the gate merges without a restart.
"""

from __future__ import annotations

import argparse

from agents import (
    Agent,
    Model,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from wikiskill import api
from wikiskill.integrations.host import Mode, SkillSet

INSTRUCTIONS = "You are a careful assistant. Follow a skill's instructions when it fits the task."


def skills_agent(skills: SkillSet, model: str | Model, mode: Mode = "index") -> Agent[str]:
    """An agent whose instructions hold the skills block; the run context is the task text (which
    `retrieve` mode ranks the skills against)."""

    @function_tool
    def load_skill(name: str) -> str:
        """Load the full instructions of one of the available skills by name."""
        return skills.call_tool("load_skill", {"name": name})

    def instructions(context: RunContextWrapper[str], agent: Agent[str]) -> str:
        return f"{INSTRUCTIONS}\n\n{skills.render(context.context, mode=mode)}"

    return Agent(
        name="assistant", instructions=instructions, model=model, tools=[load_skill] if mode == "index" else []
    )


def chat_model(model: str, base_url: str | None, api_key: str | None) -> str | Model:
    """OpenAI's own model by name, or `model` on any OpenAI-compatible server at `base_url`."""
    if base_url is None:
        return model
    set_tracing_disabled(True)  # traces are uploaded to OpenAI; a local server has no use for that
    return OpenAIChatCompletionsModel(
        model=model, openai_client=AsyncOpenAI(base_url=base_url, api_key=api_key or "local")
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", help="a wikiskill workspace")
    parser.add_argument("task", help="what the agent should do")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--api-key", help="the server's key, if it wants one (else OPENAI_API_KEY)")
    parser.add_argument("--mode", choices=["index", "full", "retrieve"], default="index")
    parser.add_argument("--ref", default="main", help="the git ref whose skills to use")
    args = parser.parse_args(argv)
    with api.skill_set(args.workspace, ref=args.ref).live() as skills:
        agent = skills_agent(skills, chat_model(args.model, args.base_url, args.api_key), args.mode)
        result = Runner.run_sync(agent, args.task, context=args.task)
    print(result.final_output)


if __name__ == "__main__":
    main()
