"""What a round will spend before it runs, and the budget check that refuses a round it cannot pay for.

Each part of a round is estimated from the settings (task counts, repeats, the gate's plan, the
roles' limits) and the usage git records:
- the task agent, per task, from the last rollout's trajectories in raw/ (calls and tokens),
  corrected for the skills main has now and, on val, for the candidate's one more skill; with no
  rollout yet, from the baseline's val.jsonl; else from conservative defaults;
- the maintainer and the proposer from their last transcripts in raw/ (every turn records its
  tokens), corrected for how much the wiki and the skills they are shown have grown since; else
  from defaults sized by their settings (sampled traces, `max_turns`);
- a judge, per scored task, from the last rollout's `Tokens-Judge` trailer; else from defaults.
USD is the tokens at the role's model's list price (`llm.profile`), where litellm has one.
A part is an upper bound where the round may do less: the candidate is assumed validated on the
whole val pool and, under a confirming policy, confirmed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from ..benchmarks import BenchmarkKind
from ..contracts.roles import ProposerContext
from ..contracts.runners import runner_of
from ..contracts.transcript import Transcript
from ..core.config import OFFLINE_MODEL, Config
from ..core.errors import BudgetExceeded
from ..core.prompts import render_fields
from ..knowledge.settings import SkillsSettings
from ..knowledge.skills import Skill, load_skills
from ..knowledge.skillsblock import render_skills
from ..knowledge.wiki import maintainer_view, read_wiki
from ..llm.context import CHARS_PER_TOKEN, conversation_tokens, estimate_tokens
from ..llm.profile import ModelProfile
from ..llm.speed import SpeedBook
from ..roles.settings import Role
from ..store.reads import WorkspaceReads
from ..store.rounds import REJECTED_PREFIX, round_label, round_state
from ..store.traces import Trajectory
from ..store.trailers import Step
from ..store.workspace import MAIN, Commit
from .impact import IMPACT
from .steps.evaluation import incumbent_recorded

if TYPE_CHECKING:
    from ..store.rounds import RoundState
    from .evaluating import Evaluator

COMPLETION_SHARE = 0.1
"""Of a measurement that records only total tokens (val.jsonl, a judge's trailer), the share
taken as completion tokens."""
AGENT_CALL = (1500, 200)
"""Default (prompt, completion) tokens of one task-agent call, before any measurement."""
SKILL_TOKENS = 300
"""Default tokens one more skill adds to the agent's prompt, before any skill exists."""
JUDGE_CALL = (3000, 300)
"""Default (prompt, completion) tokens of one judge verdict."""
ROLE_PROMPT_TOKENS = 2000
"""Default tokens of a maintainer's or proposer's fixed prompt (instructions, tools, index)."""
PROPOSER_COMPLETION_TOKENS = 400
MAINTAINER_CALLS = 2
"""The maintainer's attempts at most: a reply that fails its checks is asked for once more."""
MAINTAINER_COMPLETION_TOKENS = 2048


class Part(StrEnum):
    """A part of a round that calls a model."""

    TRAIN = "agent on train"
    MAINTAINER = "maintainer"
    PROPOSER = "proposer"
    VAL = "agent on val"
    """The candidate's validation (and its confirmation, under a confirming policy)."""
    INCUMBENT = "agent on val, main"
    """Main's skills evaluated first: the baseline before round 1, or after main or the settings changed."""
    JUDGE = "judge"


class PartEstimate(BaseModel):
    part: Part
    role: Role
    calls: int
    prompt_tokens: int
    completion_tokens: int
    usd: float | None
    """None: the role's model has no list price litellm knows."""
    basis: str
    """Where the figures come from: `measured in r002`, `the baseline`, `defaults`."""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RoundEstimate(BaseModel):
    round: int
    parts: list[PartEstimate]
    seconds: float | None = None
    """Wall time at the servers' measured speed (`with_wall_time`), the parts whose speed is
    unknown left out; None when none is known."""
    unmeasured: list[Role] = []
    """Roles whose server's speed nothing has measured yet (`doctor` measures it)."""

    @property
    def calls(self) -> int:
        return sum(part.calls for part in self.parts)

    @property
    def tokens(self) -> int:
        return sum(part.tokens for part in self.parts)

    @property
    def usd(self) -> float:
        """USD of the priced parts."""
        return sum(part.usd or 0.0 for part in self.parts)

    @property
    def unpriced(self) -> list[Part]:
        return [part.part for part in self.parts if part.usd is None and part.calls]

    def of(self, role: Role) -> tuple[int, int]:
        """(calls, tokens) the role makes in the round."""
        parts = [part for part in self.parts if part.role is role]
        return sum(part.calls for part in parts), sum(part.tokens for part in parts)


class Estimate(BaseModel):
    """The next rounds of `evolve`, each estimated, and the budget they are checked against."""

    rounds: list[RoundEstimate]
    max_usd: float | None = None

    @property
    def usd(self) -> float:
        return sum(estimate.usd for estimate in self.rounds)

    @property
    def affordable(self) -> int | None:
        """How many of the rounds `budget.max_usd` lets start (evolve checks each round's
        estimate against what is left); None without a limit."""
        if self.max_usd is None:
            return None
        spent = 0.0
        for count, estimate in enumerate(self.rounds):
            spent += estimate.usd
            if spent > self.max_usd:
                return count
        return len(self.rounds)


@dataclass(frozen=True)
class PerTask:
    """Mean usage of the task agent (or a judge) on one task."""

    calls: float
    prompt: float
    completion: float
    basis: str

    @classmethod
    def defaults(cls, calls: float, prompt_per_call: float, completion_per_call: float) -> PerTask:
        return cls(calls, calls * prompt_per_call, calls * completion_per_call, "defaults")

    def with_prompt(self, extra_per_call: float) -> PerTask:
        return PerTask(self.calls, self.prompt + self.calls * extra_per_call, self.completion, self.basis)


def estimate_round(evaluator: Evaluator, number: int, later: bool = False) -> RoundEstimate:
    """The model calls round `number` will make, part by part; what git records as done is left
    out. `later`: a round after the next one, when nothing of it has run and main's evaluation
    is recorded."""
    reader = evaluator.reader
    ws, config, spec = reader.ws, reader.config, reader.benchmark.spec
    state = round_state(ws, number)
    started = state.started and not later
    agent, skill_tokens, scale = agent_per_task(ws, config, reader.skills_at(MAIN), spec.kind)
    judged = spec.judged and not _offline(config, Role.JUDGE)
    parts: list[PartEstimate] = []
    if not _offline(config, Role.AGENT) or judged:  # only then are the tasks counted (a suite may generate them)
        scored = _tasks_played(evaluator, state if started else None, later)
        if not _offline(config, Role.AGENT):
            prompts = {Part.TRAIN: agent, Part.INCUMBENT: agent, Part.VAL: agent.with_prompt(skill_tokens)}
            parts += [_part(config, part, Role.AGENT, prompts[part], tasks) for part, tasks in scored.items() if tasks]
        played = sum(scored.values(), 0)
        if judged and played:
            parts.append(_part(config, Part.JUDGE, Role.JUDGE, judge_per_task(ws, config), played))
    if config.maintainer.enabled and not _offline(config, Role.MAINTAINER) and not (started and state.maintain):
        parts.append(_part(config, Part.MAINTAINER, Role.MAINTAINER, _maintainer(ws, config, number, scale), 1))
    proposed = started and (state.closed or state.proposal is not None)
    if not _offline(config, Role.PROPOSER) and not proposed:
        parts.append(_part(config, Part.PROPOSER, Role.PROPOSER, _proposer(ws, config, number, scale), 1))
    return RoundEstimate(round=number, parts=parts)


def _tasks_played(evaluator: Evaluator, started: RoundState | None, later: bool) -> dict[Part, int]:
    """Tasks the agent will play per part of the round (`started`: what git records of it)."""
    reader = evaluator.reader
    train = len(reader.tasks("train"))
    val = len(reader.tasks("val")) * evaluator.setup("val").repeats
    plan = reader.policy.plan()
    candidate_runs = 1 + plan.confirms  # the whole pool, and a confirmation: an upper bound
    if started is not None and started.closed:
        candidate_runs = 0
    elif started is not None and started.validations:
        candidate_runs = int(plan.confirms and not started.confirmations)
    return {
        Part.TRAIN: 0 if started is not None and started.rollout else train,
        Part.INCUMBENT: 0 if later or incumbent_recorded(evaluator) else val,
        Part.VAL: val * candidate_runs,
    }


def with_wall_time(estimate: RoundEstimate, config: Config, speeds: SpeedBook) -> RoundEstimate:
    """`estimate` with the wall time its parts take at the measured speed of each role's server:
    a part's tokens at that speed, the task agent's and the judge's spread over `concurrency`."""
    seconds: float | None = None
    unmeasured: list[Role] = []
    for part in estimate.parts:
        settings = config.role(part.role)
        taken = speeds.of(settings.model or "", settings.api_base).seconds(part.prompt_tokens, part.completion_tokens)
        if taken is None:
            unmeasured += [] if part.role in unmeasured else [part.role]
            continue
        parallel = part.role in (Role.AGENT, Role.JUDGE)
        seconds = (seconds or 0.0) + taken / (config.concurrency if parallel else 1)
    return estimate.model_copy(update={"seconds": seconds, "unmeasured": unmeasured})


def check_round_budget(evaluator: Evaluator, number: int) -> None:
    """Refuse to start round `number` when `budget.max_usd` cannot pay for its estimate on top of
    what this command has spent: one line with the figures, before any model call."""
    limit = evaluator.reader.config.budget.max_usd
    if limit is None:
        return
    estimate = estimate_round(evaluator, number)
    spent = evaluator.meter.spent().cost_usd
    if spent + estimate.usd > limit:
        raise BudgetExceeded(
            f"budget too small for {round_label(number)}: it would spend about ${estimate.usd:.4f} "
            f"({estimate.calls} calls, {estimate.tokens} tokens) on top of ${spent:.4f} spent, over "
            f"budget.max_usd ${limit}; not started (raise the budget in wikiskill.yaml; "
            "`wikiskill estimate` shows each part)"
        )


def agent_per_task(
    ws: WorkspaceReads, config: Config, main_skills: list[Skill], kind: BenchmarkKind
) -> tuple[PerTask, float, float]:
    """The task agent's usage on one task with main's skills, the tokens one more skill adds to
    each of its calls, and the model's tokens per token of `estimate_tokens` (measured on the
    last rollout's prompts; 1 before any)."""
    prompted = runner_of(config.agent).prompts_skills
    pool = main_skills
    rollout = _latest(ws, (Step.ROLLOUT,))
    if rollout is not None:
        label = round_label(rollout.meta.round or 0)
        then = load_skills(ws.read_files(rollout.sha, "skills"))
        pool = pool or then
        runs = [
            Trajectory.model_validate_json(text)
            for path, text in ws.read_files(rollout.sha, f"raw/{label}/train").items()
            if path.endswith(".json")
        ]
        if runs:
            scale = _scale(runs)
            rows: list[tuple[float, float, float]] = []
            for run in runs:
                change = _block(main_skills, config.skills, run.question) - _block(then, config.skills, run.question)
                calls = run.usage.calls
                prompt = run.usage.prompt_tokens + calls * change * prompted * scale
                rows.append((calls, prompt, run.usage.completion_tokens))
            return _mean(rows, f"measured in {label}"), _skill_tokens(pool, config.skills) * prompted * scale, scale
    baseline = _latest(ws, (Step.BASELINE, Step.INCUMBENT))
    if baseline is not None and baseline.meta.results:
        then = load_skills(ws.read_files(baseline.sha, "skills"))
        pool = pool or then
        change = (_block(main_skills, config.skills) - _block(then, config.skills)) * prompted
        rows = []
        for line in (ws.read_file(baseline.sha, baseline.meta.results) or "").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and "tokens" in row:
                calls, tokens = max(int(row.get("steps") or 0), 1), float(row["tokens"] or 0)
                rows.append((calls, tokens * (1 - COMPLETION_SHARE) + calls * change, tokens * COMPLETION_SHARE))
        if rows:
            return _mean(rows, "the baseline"), _skill_tokens(pool, config.skills) * prompted, 1.0
    calls = 1 if kind is BenchmarkKind.QA else config.agent.max_steps
    prompt = AGENT_CALL[0] + _block(main_skills, config.skills) * prompted
    return PerTask.defaults(calls, prompt, AGENT_CALL[1]), _skill_tokens(pool, config.skills) * prompted, 1.0


def judge_per_task(ws: WorkspaceReads, config: Config) -> PerTask:
    """A judge's usage on one scored task: the last rollout's judge tokens per task, else defaults."""
    samples = config.judge.samples
    rollout = _latest(ws, (Step.ROLLOUT,))
    if rollout is not None:
        label = round_label(rollout.meta.round or 0)
        tasks = sum(path.endswith(".json") for path in ws.list_paths(rollout.sha, f"raw/{label}/train"))
        tokens = rollout.meta.role_tokens.get(Role.JUDGE.value)
        if tasks and tokens:
            each = tokens / tasks
            return PerTask(samples, each * (1 - COMPLETION_SHARE), each * COMPLETION_SHARE, f"measured in {label}")
    return PerTask.defaults(samples, *JUDGE_CALL)


def _maintainer(ws: WorkspaceReads, config: Config, number: int, scale: float) -> PerTask:
    found = _transcript(ws, number, "maintainer.json", {})
    if found is not None:
        measured, earlier = found
        before = round_state(ws, earlier).rollout  # the wiki as that maintainer saw it
        budget = config.maintainer.wiki_token_budget
        change = _wiki_view(ws, MAIN, budget) - (_wiki_view(ws, before.sha, budget) if before else 0)
        return measured.with_prompt(change * scale)
    sampling = config.sampling
    traces = (sampling.max_failures + sampling.max_successes) * sampling.max_chars / CHARS_PER_TOKEN
    prompt = ROLE_PROMPT_TOKENS + traces + config.maintainer.wiki_token_budget
    return PerTask.defaults(MAINTAINER_CALLS, prompt, MAINTAINER_COMPLETION_TOKENS)


def _proposer(ws: WorkspaceReads, config: Config, number: int, scale: float) -> PerTask:
    found = _transcript(ws, number, "proposer.json", ws.refs(f"refs/tags/{REJECTED_PREFIX}"))
    if found is not None:
        measured, earlier = found
        state = round_state(ws, earlier)
        before = state.maintain or state.rollout  # main as that proposer read it
        change = _proposer_context(ws, MAIN) - (_proposer_context(ws, before.sha) if before else 0)
        return measured.with_prompt(change * scale)
    turns = config.proposer.max_turns
    kept = config.proposer.kept_results_tokens
    prompt = ROLE_PROMPT_TOKENS + (kept if kept is not None else config.sampling.max_chars / CHARS_PER_TOKEN * turns)
    return PerTask.defaults(turns, prompt, PROPOSER_COMPLETION_TOKENS)


def _transcript(ws: WorkspaceReads, number: int, name: str, rejected: dict[str, str]) -> tuple[PerTask, int] | None:
    """The usage of the newest transcript `raw/rNNN/<name>` of a round before `number`, on main
    or (a rejected proposal's) on its `rejected/` tag, and that round's number."""
    for earlier in range(number - 1, 0, -1):
        label = round_label(earlier)
        tags = [sha for tag, sha in rejected.items() if tag.startswith(f"{REJECTED_PREFIX}{label}-")]
        for ref in [MAIN, *tags]:
            text = ws.read_file(ref, f"raw/{label}/{name}")
            if not text:
                continue
            try:
                transcript = Transcript.model_validate_json(text)
            except ValidationError:
                continue
            turns = transcript.turns
            if turns:
                usage = PerTask(
                    len(turns),
                    sum(turn.prompt_tokens for turn in turns),
                    sum(turn.completion_tokens for turn in turns),
                    f"measured in {label}",
                )
                return usage, earlier
    return None


def _wiki_view(ws: WorkspaceReads, ref: str, budget: int) -> int:
    """Tokens of the wiki the maintainer is shown at `ref` (its view is capped at `budget`)."""
    view = maintainer_view(read_wiki(ws.read_files(ref, "wiki")), "", budget)
    return estimate_tokens("\n".join([view.index, view.log, *view.pages.values()]))


def _proposer_context(ws: WorkspaceReads, ref: str) -> int:
    """Tokens of what the proposer's prompt shows of the workspace at `ref`: the wiki's index,
    skill-impact.md and the skills (the train outcomes are the same size every round)."""
    context = ProposerContext(
        index=ws.read_file(ref, "wiki/index.md") or "",
        impact=ws.read_file(ref, IMPACT) or "",
        skills=load_skills(ws.read_files(ref, "skills")),
    )
    text = render_fields("proposer_user", context.prompt_fields())
    return estimate_tokens(text)


def _scale(runs: list[Trajectory]) -> float:
    """The model's prompt tokens per token of `estimate_tokens`, over these conversations (each
    reply's prompt is every message before it); 1 where they kept no messages."""
    estimated = 0
    for run in runs:
        replies = [index for index, message in enumerate(run.messages) if message.get("role") == "assistant"]
        estimated += sum(conversation_tokens(run.messages[:index]) for index in replies)
    measured = sum(run.usage.prompt_tokens for run in runs)
    return measured / estimated if estimated and measured else 1.0


def _part(config: Config, part: Part, role: Role, per_task: PerTask, tasks: int) -> PartEstimate:
    prompt, completion = round(per_task.prompt * tasks), round(per_task.completion * tasks)
    return PartEstimate(
        part=part,
        role=role,
        calls=round(per_task.calls * tasks),
        prompt_tokens=prompt,
        completion_tokens=completion,
        usd=ModelProfile(config.role(role), role).price(prompt, completion),
        basis=per_task.basis,
    )


def _latest(ws: WorkspaceReads, steps: tuple[Step, ...]) -> Commit | None:
    return next((commit for commit in ws.log(MAIN) if commit.meta.step in steps), None)


def _mean(rows: Sequence[tuple[float, float, float]], basis: str) -> PerTask:
    count = len(rows)
    calls, prompt, completion = (sum(row[index] for row in rows) / count for index in range(3))
    return PerTask(calls, prompt, completion, basis)


def _block(skills: list[Skill], settings: SkillsSettings, task: str = "") -> int:
    """Tokens of the skills block a task's prompt carries."""
    text = render_skills(skills, settings, task)
    return estimate_tokens(text) if text else 0


def _skill_tokens(pool: list[Skill], settings: SkillsSettings) -> float:
    """Tokens one more skill, of the size of those in `pool`, adds to a prompt."""
    if not pool:
        return SKILL_TOKENS
    return sum(_block([skill], settings) for skill in pool) / len(pool)


def _offline(config: Config, role: Role) -> bool:
    return config.role(role).model == OFFLINE_MODEL
