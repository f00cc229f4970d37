"""The scripted world played through the real Qwen Code CLI, and the tiny QA suite it plays: the
scripted model reverses words of at most 6 letters right only once the SPELL skill reached it.
How it reaches it is the world's choice: through Qwen Code's `skill` tool (a load its transcript
records), or from the skill's listing alone (a gain that never loads the skill)."""

import json
import re
from pathlib import Path

from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.store.workspace import Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

TRAIN = [("count", "banana", "a"), ("reverse", "lemon", None)]
VAL = [("count", "pepper", "p"), ("reverse", "tattoo", None), ("reverse", "giraffe", None)]
"""With the skill loaded the scripted model reverses words of at most 6 letters right: val goes
from 1/3 to 2/3, so the round after the merge still runs."""


def question(kind: str, word: str, letter: str | None) -> dict:
    if kind == "count":
        return {
            "question": f"How many times does the letter '{letter}' occur in the word '{word}'? Answer with a number.",
            "answer": str(word.count(letter)),
        }
    return {
        "question": f"Write the word '{word}' backwards, letter by letter. Answer with the reversed word only.",
        "answer": word[::-1],
    }


def tiny_suite(folder: Path) -> str:
    """A jsonl QA suite of 2 train and 3 val tasks like example-qa's: `jsonl:FOLDER`."""
    folder.mkdir()
    for split, rows in (("train", TRAIN), ("val", VAL), ("test", VAL[:1])):
        lines = [json.dumps({"id": f"{split}-{index:02d}", **question(*row)}) for index, row in enumerate(rows)]
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "suite.json").write_text(json.dumps({"scorer": "exact"}))
    return f"jsonl:{folder}"


def tiny_workspace(root: Path, server: FakeOpenAIServer, agent: str | None = "qwen-code") -> Workspace:
    """A workspace at root/ws over `tiny_suite` (root/suite), its model the scripted server's."""
    return api.init_workspace(
        root / "ws",
        benchmark=tiny_suite(root / "suite"),
        model="openai/fake-model",
        api_base=server.base_url,
        concurrency=4,
        agent=agent,
    )


def text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class QwenCodeWorld(ScriptedWorld):
    """ScriptedWorld, with the task agent played through Qwen Code: when `spell-letters` is listed
    among its skills the model first calls the `skill` tool for it (on reversals only with
    `reversals_only`), and it reverses words right only once a tool result (the loaded SKILL.md)
    carries the SPELL marker; with `silent`, it never calls the tool and reverses right whenever
    the skill is listed."""

    def __init__(self, reversals_only: bool = False, silent: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.reversals_only = reversals_only
        self.silent = silent
        self.seen: list[str] = []

    def __call__(self, body: dict) -> Reply | str:
        messages = body["messages"]
        system = text(messages[0]) if messages[0]["role"] == "system" else ""
        if system.startswith(
            ("You are a Wiki Maintainer Agent", "You are a Skill Proposer Agent", "You are a careful problem solver")
        ):  # wikiskill's roles and built-in agent
            return super().__call__(body)
        if not system.startswith("You are Qwen Code"):
            return "Nothing to do."  # a side request of the CLI's own
        prompt = "\n".join(text(m) for m in messages if m["role"] == "user")
        self.seen.append(json.dumps(body))
        results = [text(m) for m in messages if m["role"] == "tool"]
        listed = "spell-letters" in prompt
        wanted = listed and not self.silent and ("backwards" in prompt or not self.reversals_only)
        if not results and wanted:
            return Reply(
                content="Let me load the skill first.",
                tool_calls=[{"name": "skill", "arguments": {"skill": "spell-letters"}}],
            )
        loaded = any(SPELL in result for result in results) or (self.silent and listed)
        return self.answer(
            SPELL if loaded else "", re.sub(r"<system-reminder>.*?</system-reminder>", "", prompt, flags=re.DOTALL)
        )
