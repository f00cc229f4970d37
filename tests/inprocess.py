"""The scripted world played in process: a ChatModel that asks a ScriptedWorld directly, the
example-qa workspaces it evolves, and hand-made steps of such a workspace's history."""

import json
from pathlib import Path

from scripted import ScriptedWorld, skill_md
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.llm.chat import Reply, ToolCall
from wikiskill.loop.harness import Harness, QuietReporter
from wikiskill.loop.steps import round_steps
from wikiskill.store.rounds import round_state
from wikiskill.store.traces import Usage
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import MAIN, Workspace
from wikiskill.testing.fakeserver import Reply as ServerReply
from workspaces import UNUSED_SERVER


class WorldModel:
    """A ChatModel that asks a ScriptedWorld directly: the whole loop without HTTP or litellm."""

    def __init__(self, world):
        self.world = world
        self.calls = 0

    def complete(
        self, messages: list[dict], tools: list[dict] | None = None, response_model=None, call_required=False
    ) -> Reply:
        self.calls += 1
        answer = self.world({"messages": messages, "tools": tools})
        if isinstance(answer, str):
            answer = ServerReply(content=answer)
        calls = [
            ToolCall(
                f"call_{self.calls}_{n}",
                c["name"],
                c["arguments"] if isinstance(c["arguments"], dict) else None,
                json.dumps(c["arguments"]),
            )
            for n, c in enumerate(answer.tool_calls or [])
        ]
        return Reply(answer.content, calls, Usage(calls=1, prompt_tokens=10, completion_tokens=5))

    async def acomplete(
        self, messages: list[dict], tools: list[dict] | None = None, response_model=None, call_required=False
    ) -> Reply:
        return self.complete(messages, tools)


def scripted_workspace(path: Path) -> Workspace:
    """An example-qa workspace whose roles will be WorldModels (see `evolve_scripted`)."""
    return api.init_workspace(
        path, benchmark="example-qa", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )


def scripted_harness(ws: Workspace, world=None) -> Harness:
    """A Harness of `ws` whose roles all ask one WorldModel of `world` (a ScriptedWorld)."""
    model = WorldModel(world or ScriptedWorld())
    return Harness.open(ws, model_factory=lambda role: model)


def run_round_through(harness: Harness, last: type, number: int = 1) -> None:
    """Round `number`'s steps, the ones not done yet, up to and including the first `last`."""
    for step in round_steps():
        state = round_state(harness.ws, number)
        if not step.done(harness.steps, state):
            step.run(harness.steps, state)
        if isinstance(step, last):
            return


def evolve_scripted(ws: Workspace, rounds: int = 1, world=None, commit_human_edits: bool = False):
    model = WorldModel(world or ScriptedWorld())
    return api.evolve(ws, rounds, RunOptions(model_factory=lambda role: model), commit_human_edits)


class DiesAfter(QuietReporter):
    """A run killed right after it printed `line` (SystemExit stands in for SIGKILL here)."""

    def __init__(self, line: str):
        self.line = line

    def info(self, message: str) -> None:
        if self.line in message:
            raise SystemExit("killed")


def merge_change(ws: Workspace, name: str, round_number: int, marker: str) -> str:
    """An accepted gate merge of round `round_number` that writes skills/<name>/ with `marker`."""
    from wikiskill.store.trailers import Trailers, format_message

    branch = f"skill/r{round_number:03d}-{name}"
    ws.create_branch(branch, MAIN)
    tip = ws.commit(
        {
            f"skills/{name}/SKILL.md": skill_md(name, marker),
            f"skills/{name}/PURPOSE.md": f"# {name}\n\n## Evolution History\n- r{round_number:03d} {marker}\n",
        },
        format_message(f"r{round_number} propose", Trailers(round=round_number, step=Step.PROPOSE)),
        branch=branch,
    )
    sha = ws.commit(
        {},
        format_message(
            f"r{round_number} gate: accepted {name}",
            Trailers(round=round_number, step=Step.GATE, decision=Decision.ACCEPTED, action="patch", skill=name),
        ),
        base=ws.merged_tree(MAIN, tip),
        extra_parents=(tip,),
    )
    ws.delete_branch(branch)
    return sha


def reviewed_and_rolled_back(path: Path) -> Workspace:
    """Under human review: round 1's spell-letters waits and a person accepts it, round 2's
    useless skill is rejected, spell-letters is rolled back, round 3 proposes nothing."""
    from workspaces import edit_config

    ws = scripted_workspace(path)
    edit_config(ws, **{"gate.review": "human"})
    ws.commit_working_tree(["wikiskill.yaml"], "review by a person\n")
    evolve_scripted(ws, rounds=2)
    api.accept(ws, "spell-letters", RunOptions(model_factory=lambda role: WorldModel(ScriptedWorld())))
    api.rollback(ws, "spell-letters")
    evolve_scripted(ws, rounds=1)
    return ws
