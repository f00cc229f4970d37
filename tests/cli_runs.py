"""Running a real coding-agent CLI through its preset against FakeOpenAIServer, as the CLI task
agent would (the preset's argv, environment and private HOME; the skills copied into its skills
folder), with one scripted handler for every CLI: it loads the `demo` skill through whatever the
CLI offers for that (Claude Code's `Skill` tool, Gemini CLI's `activate_skill`, a Codex shell
command reading the SKILL.md), then answers 42 only if the skill's body reached the model.
Used by the fixtures' capture scripts and by tests/roles/test_cli_presets.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from wikiskill.contracts.coding_agent import CliPreset, CliRun
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

SKILL = (
    "---\nname: demo\ndescription: How to answer the demo question; load it before answering.\n---\n"
    "# Demo\n\nThe answer to the demo question is 42. Reply with <answer>42</answer>.\n"
)
SKILL_BODY = "The answer to the demo question is 42."
PROMPT = "What is the answer to the demo question? Load the demo skill first."
MODEL = "openai/fake-model"
KEY = "sk-fake-cli"

SKILL_CALLS = {
    "Skill": {"skill": "demo"},  # Claude Code
    "activate_skill": {"name": "demo"},  # Gemini CLI
    "skill": {"skill": "demo"},  # Qwen Code
    "exec_command": {"cmd": "cat .agents/skills/demo/SKILL.md"},  # Codex
}


def _text(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def skill_then_answer(body: dict) -> Reply | str:
    """The scripted model: the main agent's first turn loads the skill, the next answers; requests
    that offer no way to load it (a CLI's side requests: titles, memory) get a short text."""
    offered = [tool["function"]["name"] for tool in body.get("tools") or []]
    call = next((name for name in SKILL_CALLS if name in offered), None)
    messages = body["messages"]
    if call is None:
        return "Nothing to add."
    if not any(message["role"] == "tool" for message in messages):
        return Reply(content="I will load the demo skill.", tool_calls=[{"name": call, "arguments": SKILL_CALLS[call]}])
    if any(SKILL_BODY in _text(message) for message in messages if message["role"] != "system"):
        return "The skill says the answer is 42. <answer>42</answer>"
    return "The skill did not say. <answer>unknown</answer>"


def skill_forever(body: dict) -> Reply | str:
    """A model that never answers: every turn loads the skill again."""
    offered = [tool["function"]["name"] for tool in body.get("tools") or []]
    call = next((name for name in SKILL_CALLS if name in offered), None)
    if call is None:
        return "Nothing to add."
    return Reply(content="Once more.", tool_calls=[{"name": call, "arguments": SKILL_CALLS[call]}])


def make_run(preset: CliPreset, base_url: str, tmp: Path, max_turns: int | None = 5) -> CliRun:
    """A fresh workdir holding the demo skill in the preset's skills folder, and a private HOME."""
    home, work = tmp / "home", tmp / "work"
    home.mkdir(parents=True)
    skill = work / preset.skills_folder / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    return CliRun(
        prompt=PROMPT,
        workdir=work,
        home=home,
        skills=("demo",),
        model=MODEL,
        api_base=base_url,
        api_key=KEY,
        max_turns=max_turns,
    )


def run_cli(
    preset: CliPreset, run: CliRun, program: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run the CLI headless on `run` with only PATH, HOME, TERM and LANG from outside, and the
    preset's variables; stdin is empty."""
    preset.prepare_home(run)
    program = program or shutil.which(preset.program)
    assert program, f"{preset.program} is not on PATH"
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(run.home),
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        **preset.environment(run),
    }
    argv = [program, *preset.argv(run)[1:]]
    return subprocess.run(
        argv, cwd=run.workdir, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )


def capture(preset: CliPreset, program: str, out: Path) -> None:
    """Write the CLI's stdout on the demo task to `out` (a fixture's capture script)."""
    with tempfile.TemporaryDirectory(prefix="cli-capture-") as tmp, FakeOpenAIServer(skill_then_answer) as server:
        proc = run_cli(preset, make_run(preset, server.base_url, Path(tmp)), program)
        requests = len(server.requests)
    print(f"exit code {proc.returncode}, {requests} model requests; stderr:\n{proc.stderr}")
    out.write_text(proc.stdout)
