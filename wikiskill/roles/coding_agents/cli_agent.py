"""A coding-agent CLI as the task agent of a QA or task-folder suite.

Each task: a fresh folder (`isolation`), the skills copied as Agent Skills folders where the CLI
reads project skills, the preset's settings written into the private HOME, the CLI run headless
on the task (under `sandbox` when asked) with the turn limit `agent.max_steps` and the wall-time
limit `agent.timeout_s`, its transcript read into the trajectory, the folder removed. On a QA
suite the answer is the CLI's final message (`<answer>` tags honoured when present), scored by the
suite's scorer; on a task-folder suite the CLI works in the workdir made for the task, and the
suite's scorer grades what it left there (`run/workdir_tasks.py`);
a run that failed, hit a limit or printed no answer scores as no answer, with the reason as the
trajectory's error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from ...benchmarks import Benchmark, BenchmarkKind, QABenchmark, Task
from ...contracts.coding_agent import CliPreset, CliRun, CliTranscript
from ...contracts.roles import AgentParts
from ...core.prompts import render
from ...knowledge.skills import Skill
from ...llm.credentials import KEY_ENV
from ...store.traces import FailureKind, Trajectory
from ..agent import ending_with, final_answer
from ..settings import AgentSettings, Role, RoleSettings
from .cli_sandbox import sandboxed
from .isolation import minimal_environment, task_folder
from .presets import make_preset, program_path
from .process import Finished, run_limited
from .stream_json import NO_RESULT

NO_KEY = "sk-wikiskill-none"
"""The key a CLI is given when the provider needs none (a local server): most CLIs refuse an empty one."""


def api_key(model: str) -> str:
    """The key of the model's provider from wikiskill's own environment, else a placeholder."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    names = KEY_ENV.get(provider, (f"{provider.upper()}_API_KEY",))
    return next((os.environ[name] for name in names if os.environ.get(name)), NO_KEY)


def failure(finished: Finished, transcript: CliTranscript, settings: AgentSettings, program: str) -> str | None:
    """Why a run failed, in one line; None when it did not."""
    if finished.timed_out:
        return f"timed out after {settings.timeout_s:g} s (agent.timeout_s); its process tree was killed"
    if finished.returncode:
        said = next((line.strip() for line in reversed(finished.stderr.splitlines()) if line.strip()), "")
        reported = transcript.error if transcript.error != NO_RESULT else None
        reason = reported or said or transcript.error or "no reason given"
        return f"{os.path.basename(program)} exited with status {finished.returncode}: {reason}"
    return transcript.error


class CliAgent:
    """A TaskAgent (QA suites) and WorkdirAgent (task folders) that runs one CLI preset per task,
    isolated."""

    def __init__(
        self,
        preset: CliPreset,
        benchmark: Benchmark,
        skills: Sequence[Skill],
        settings: AgentSettings,
        model: RoleSettings,
    ):
        self.preset = preset
        self.program = program_path(preset)
        self.benchmark = benchmark
        self.skills = list(skills)
        self.settings = settings
        self.model = model

    @classmethod
    def from_parts(cls, parts: AgentParts) -> CliAgent:
        """The CLI preset `agent.runner` names, with the agent's settings."""
        agent = parts.config.agent
        return cls(make_preset(agent), parts.benchmark, parts.skills, agent, parts.config.role(Role.AGENT))

    async def run(self, task: Task) -> Trajectory:
        """A QA task, played in a folder of its own and scored by the suite."""
        trajectory = await self._play(task, None)
        score = cast(QABenchmark, self.benchmark).score(task, trajectory.prediction)
        return trajectory.model_copy(update={"score": score})

    async def play(self, task: Task, workdir: Path) -> Trajectory:
        """A task-folder suite's task in the `workdir` made for it, unscored (`WorkdirAgent`)."""
        return await self._play(task, workdir)

    async def _play(self, task: Task, workdir: Path | None) -> Trajectory:
        names = [skill.name for skill in self.skills]
        kind = self.benchmark.spec.kind
        with task_folder(self.skills, self.preset.skills_folder, workdir) as folder:
            model = self.model.model or ""
            prompt = render("agent_cli", question=task.question, answer_tags=kind is BenchmarkKind.QA)
            run = CliRun(
                prompt=prompt,
                workdir=folder.workdir,
                home=folder.home,
                skills=tuple(names),
                model=model,
                api_base=self.model.api_base,
                api_key=api_key(model),
                max_turns=self.settings.max_steps,
            )
            self.preset.prepare_home(run)
            env = {**minimal_environment(folder), **self.preset.environment(run)}
            argv = sandboxed([self.program, *self.preset.argv(run)[1:]], folder, self.settings.sandbox, env["PATH"])
            finished = await run_limited(argv, str(folder.workdir), env, self.settings.timeout_s)
        return read_back(task, kind, run, self.preset, finished, self.settings, self.program)


def read_back(
    task: Task,
    kind: BenchmarkKind,
    run: CliRun,
    preset: CliPreset,
    finished: Finished,
    settings: AgentSettings,
    program: str,
) -> Trajectory:
    """The unscored trajectory of a finished run, from the CLI's streamed transcript."""
    names = list(run.skills)
    transcript = preset.parse(finished.stdout.splitlines(), names)
    error = failure(finished, transcript, settings, program)
    text = transcript.answer if error is None else None
    prediction = final_answer(text)
    if error is None and not prediction and kind is BenchmarkKind.QA:
        error, prediction = "the CLI gave no answer", None
    return Trajectory(
        task_id=task.id,
        split=task.split,
        kind=kind,
        question=task.question,
        messages=ending_with([{"role": "user", "content": run.prompt}, *transcript.messages], text),
        prediction=prediction,
        expected=task.answer,
        usage=transcript.usage,
        skills=names,
        skills_loaded=transcript.skills_loaded,
        error=error,
        failure=FailureKind.TIMEOUT if finished.timed_out else None,
    )
