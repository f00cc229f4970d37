"""The LLM interactive agent on a real generated game, through litellm and a local scripted server."""

import asyncio
import re

from wikiskill.benchmarks.textworld_cooking import TextWorldCooking, walkthrough
from wikiskill.knowledge.settings import SkillsSettings
from wikiskill.knowledge.skills import parse_skill
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.agent import InteractiveAgent, extract_action
from wikiskill.roles.settings import RoleSettings
from wikiskill.testing.fakeserver import FakeOpenAIServer

SKILL = parse_skill(
    "---\nname: cook-carefully\ndescription: Cook each ingredient once.\n---\n\n"
    "## When to Apply\nCooking.\n\n## When NOT to Apply\nNever.\n\n## Instructions\nCOOK-ONCE-MARKER\n"
)


class Player:
    """Plays a typo first (an invalid action), then the game's walkthrough, one action per turn."""

    def __init__(self, actions):
        self.actions = ["dance wildly"] + actions

    def __call__(self, body):
        turn = int(re.search(r"Step (\d+) of", body["messages"][-1]["content"]).group(1)) - 1
        return f"I will act.\n<action>{self.actions[min(turn, len(self.actions) - 1)]}</action>"


def test_interactive_agent_plays_a_real_game_through_litellm():
    bench = TextWorldCooking(n_train=1, n_val=1, n_test=1)
    task = bench.tasks("train")[0]
    moves = walkthrough(task)
    with FakeOpenAIServer(Player(moves)) as server:
        model = LiteLLMModel(
            RoleSettings(model="openai/fake-model", api_base=server.base_url), LLMSettings(retries=0), "agent", Meter()
        )
        agent = InteractiveAgent(model, bench, [SKILL], SkillsSettings(), max_steps=len(moves) + 5)
        trajectory = asyncio.run(agent.run(task))
        requests = server.requests
    assert trajectory.won and trajectory.score == 1.0 and not trajectory.lost
    assert [s.action for s in trajectory.steps] == ["dance wildly", *moves]
    assert trajectory.steps[0].note == "`dance wildly` was not among the admissible actions."
    assert "not a verb" in trajectory.steps[0].observation
    assert trajectory.usage.calls == len(moves) + 1 and trajectory.usage.prompt_tokens > 0
    first, second = requests[0]["messages"], requests[1]["messages"]
    assert "COOK-ONCE-MARKER" in first[0]["content"]
    assert first[1]["content"].startswith("Goal: ") and "Admissible actions: " in first[1]["content"]
    assert "was not among the admissible actions" in second[-1]["content"]
    assert re.search(r"Score so far: 0\.0 of \d", first[1]["content"])
    rendered = trajectory.render()
    assert "[1] > dance wildly" in rendered and "won: True" in rendered


def test_extract_action_takes_the_tagged_action_or_the_last_line():
    assert extract_action("think\n<action> open   fridge </action>") == "open fridge"
    assert extract_action("I go.\ngo north") == "go north"
    assert extract_action("") == ""
