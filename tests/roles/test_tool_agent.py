"""The tool-use agent serves a multi-turn user conversation by calling a task's functions: each
reply's calls run together against the task's session, a turn ends at a reply without calls,
tools a turn adds are offered from then on, `load_skill` is answered on the agent's side, and a
turn still calling at `max_steps` or a conversation too long for the model ends the task."""

import asyncio
import json

from chatmodels import served_model
from wikiskill.benchmarks import FunctionCall, Task, UserTurn
from wikiskill.knowledge.settings import SkillsMode, SkillsSettings
from wikiskill.knowledge.skills import parse_skill
from wikiskill.roles.tool_agent import ToolUseAgent
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import skill_md


def function(name: str, **parameters: str) -> dict:
    properties = {key: {"type": kind} for key, kind in parameters.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


class Bank:
    """A session over one account: `deposit` from the first turn, `balance` added by the second."""

    def __init__(self):
        self.tools = [function("deposit", amount="number")]
        self.user_turns = [
            UserTurn("Deposit 5 and then 7."),
            UserTurn("What is my balance?", added_tools=[function("balance")]),
        ]
        self.balance, self.steps, self.closed, self.answered = 0, [], False, None

    def execute(self, turn: int, calls: list[FunctionCall]) -> list[str]:
        self.steps.append((turn, [call.name for call in calls]))
        results = []
        for call in calls:
            if call.name == "deposit":
                self.balance += (call.arguments or {}).get("amount", 0)
            results.append(f"{call.name}: balance {self.balance}")
        return results

    def score(self, answered_turns: int) -> float:
        self.answered = answered_turns
        return 1.0 if self.balance == 12 else 0.0

    def close(self) -> None:
        self.closed = True


class BankSuite:
    def __init__(self):
        self.session = Bank()

    def open_session(self, task: Task) -> Bank:
        return self.session


def banker(body: dict) -> Reply | str:
    """Deposits 5 and 7 in one reply, then says so; asked the balance, calls `balance`, then answers."""
    messages = body["messages"]
    users = [m for m in messages if m["role"] == "user"]
    after_user = messages[len(messages) - messages[::-1].index(users[-1]) :]
    if len(users) == 1:
        if not after_user:
            return Reply(tool_calls=[{"name": "deposit", "arguments": {"amount": a}} for a in (5, 7)])
        return "Deposited 12."
    if not after_user:
        return Reply(tool_calls=[{"name": "balance", "arguments": {}}])
    return f"Your balance: {after_user[-1]['content']}"


def play(handler, max_steps: int = 4, settings: SkillsSettings | None = None, skills=(), context_window=None):
    suite = BankSuite()
    task = Task("bank-1", "train", "Deposit, then ask the balance.")
    with FakeOpenAIServer(handler, context_window=context_window) as server:
        agent = ToolUseAgent(
            served_model(server, "agent"), suite, list(skills), settings or SkillsSettings(), max_steps
        )
        trajectory = asyncio.run(agent.run(task))
    return trajectory, suite.session, server.requests


def test_each_reply_runs_its_calls_together_and_every_turn_is_answered():
    trajectory, session, _ = play(banker)
    assert session.steps == [(0, ["deposit", "deposit"]), (1, ["balance"])] and session.closed
    assert trajectory.score == 1.0 and session.answered == 2 and trajectory.error is None
    tool_results = [m["content"] for m in trajectory.messages if m["role"] == "tool"]
    assert tool_results == ["deposit: balance 5", "deposit: balance 12", "balance: balance 12"]
    assert trajectory.messages[0] == {"role": "user", "content": "Deposit 5 and then 7."}
    assert trajectory.messages[-1]["content"] == "Your balance: balance: balance 12"


def test_a_tool_a_turn_adds_is_offered_from_that_turn_on():
    _, _, requests = play(banker)
    offered = [sorted(tool["function"]["name"] for tool in request["tools"]) for request in requests]
    assert offered == [["deposit"], ["deposit"], ["balance", "deposit"], ["balance", "deposit"]]


def test_load_skill_is_answered_by_the_agent_and_never_reaches_the_session():
    skill = parse_skill(skill_md("retry-rate-limits"))

    def loader(body: dict) -> Reply | str:
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply(tool_calls=[{"name": "load_skill", "arguments": {"name": "retry-rate-limits"}}])
        return banker(body) if len(body["messages"]) > 4 else "Loaded."

    trajectory, session, requests = play(loader, settings=SkillsSettings(mode=SkillsMode.INDEX), skills=[skill])
    assert "load_skill" in [tool["function"]["name"] for tool in requests[0]["tools"]]
    assert trajectory.messages[2]["content"] == skill.body and all(
        "load_skill" not in names for _, names in session.steps
    )


def test_a_turn_still_calling_at_the_step_limit_ends_the_task_with_the_reason():
    def caller(body: dict) -> Reply:
        return Reply(tool_calls=[{"name": "deposit", "arguments": {"amount": 1}}])

    trajectory, session, requests = play(caller, max_steps=3)
    assert len(requests) == 3 and session.steps == [(0, ["deposit"])] * 3 and session.answered == 0
    assert trajectory.error == "user turn 1 was still calling functions after 3 replies" and session.closed


def test_a_conversation_too_long_for_the_model_fails_the_task_with_the_reason():
    trajectory, session, _ = play(lambda body: json.dumps({"unused": True}), context_window=50)
    assert "ContextWindowExceededError" in trajectory.error and session.answered == 0 and session.closed
