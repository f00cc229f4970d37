"""`wikiskill report`: a workspace's evolution on one static HTML page, readable offline.

The data comes from the history readers (round rows, round stories, recorded evaluations, the
wiki at each `round/NNN` tag); the charts are plotly figures whose JavaScript is inlined once, so
the page needs no network; the page itself is prompts/report.html.j2.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from html import escape
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

from ..core.prompts import render
from ..knowledge.pages import read_pages
from ..knowledge.search import tokens
from ..loop.settings import CostUnit
from ..store.evaluations import find_evaluation
from ..store.rounds import ROUND_TAG
from ..store.traces import OutcomeRow
from ..store.trailers import Action, Decision, Step
from ..store.uplift_record import UpliftResult, recorded_uplift
from ..store.workspace import MAIN, Commit, Workspace
from .differences import uplift_differences
from .review import ReviewItem, review_queue
from .roundstory import round_story
from .status import RoundRow, Status, round_rows, status
from .transcript import task_view, transcript_lines

DECISION_COLOURS = {
    Decision.ACCEPTED.value: "#2e7d32",
    Decision.REJECTED.value: "#c62828",
    Decision.ROLLED_BACK.value: "#6a1b9a",
    Decision.PENDING.value: "#ef6c00",
}
OTHER_COLOUR = "#757575"
COLOUR_NAMES = {
    Decision.ACCEPTED.value: "green",
    Decision.REJECTED.value: "red",
    Decision.ROLLED_BACK.value: "purple",
    Decision.PENDING.value: "orange",
}
SCORE_MARGIN = 0.1
"""The val chart's y axis spans the scores plotted and this share of their spread on each side."""
MIN_SCORE_MARGIN = 0.005
DECISION_SYMBOLS = {Decision.ACCEPTED.value: "circle", Decision.REJECTED.value: "x"}
ACTION_SYMBOLS: dict[str, str] = {
    Action.CREATE: "circle",
    Action.PATCH: "diamond",
    Action.DESCRIBE: "star",
    Action.RETIRE: "x",
    Step.ROLLBACK: "triangle-down",
}


Figure: TypeAlias = Any
"""A plotly figure: plotly ships no types, so the report's figures are untyped."""


@dataclass(frozen=True)
class WikiSize:
    round: int
    pages: int
    active: int
    tokens: int


@dataclass(frozen=True)
class TaskRow:
    id: str
    candidate: float | None
    """None: an infrastructure failure (its `prediction` is the reason), left out of the comparison."""
    incumbent: float | None
    prediction: str
    expected: str


@dataclass(frozen=True)
class RoundCost:
    """A round's val score and mean per-task cost, candidate beside incumbent (the gate's
    `Cost-*` trailers where it weighed cost, else the tokens of both sides' val results), in the
    round's final state; or a manual rollback (`is_rollback`), a row of its own."""

    round: int
    skill: str
    decision: str
    unit: str
    candidate_score: float | None
    incumbent_score: float | None
    candidate_cost: float | None
    incumbent_cost: float | None
    events: tuple[str, ...] = ()
    """Every decision the round's gate commits recorded, oldest first (`pending`, `accepted`)."""
    is_rollback: bool = False
    never_loaded: bool = False
    """The gate's `Never-Loaded`: a gain whose skill the agent never loaded during validation."""

    @property
    def ratio(self) -> float | None:
        if self.candidate_cost is None or not self.incumbent_cost:
            return None
        return self.candidate_cost / self.incumbent_cost

    @property
    def decision_text(self) -> str:
        text = " → ".join(self.events) or self.decision
        return f"{text} (never loaded)" if self.never_loaded else text


@dataclass
class ReportData:
    status: Status
    rounds: list[RoundRow]
    wiki: list[WikiSize]
    validated_round: int | None = None
    """The round of the latest candidate validation, shown task by task."""
    decision: str = ""
    looks: str = ""
    """How a sequential verdict stopped (see `roundstory.looks_text`)."""
    tasks: list[TaskRow] = field(default_factory=list)
    costs: list[RoundCost] = field(default_factory=list)
    queue: list[ReviewItem] = field(default_factory=list)
    """The candidates waiting for a person's review (`gate.review: human`)."""
    uplift: UpliftResult | None = None
    """The last `wikiskill uplift`, as recorded on `uplift/results`."""
    task_pages: dict[str, str] = field(default_factory=dict)
    """Per task of the latest validation, the page beside the report that shows it as
    `wikiskill show ROUND --task ID` does (a written report's; the live one links none)."""


def decision_marker(decision: str) -> dict[str, object]:
    """How a candidate's point looks in every chart: its decision's colour and symbol."""
    return {
        "size": 13,
        "color": DECISION_COLOURS.get(decision, OTHER_COLOUR),
        "symbol": DECISION_SYMBOLS.get(decision, "circle-open"),
    }


def report_data(ws: Workspace) -> ReportData:
    rows = round_rows(ws)
    data = ReportData(
        status(ws), rows, _wiki_sizes(ws), costs=_round_costs(ws), queue=review_queue(ws), uplift=recorded_uplift(ws)
    )
    for number in sorted({row.round for row in rows}, reverse=True):
        story = round_story(ws, number)
        if story.validation:
            data.validated_round, data.decision, data.looks = number, story.decision or "pending", story.looks
            incumbent = story.incumbent_validation or _incumbent_scores(ws, number)
            data.tasks = [_task_row(row, incumbent) for row in story.validation]
            break
    return data


def _task_row(row: OutcomeRow, incumbent: dict[str, float]) -> TaskRow:
    task = str(row.get("id"))
    if row.get("failure") == "infra":
        return TaskRow(task, None, incumbent.get(task), str(row.get("error") or "infrastructure failure"), "")
    return TaskRow(
        task,
        float(row.get("score") or 0.0),
        incumbent.get(task),
        str(row.get("prediction") or ""),
        str(row.get("expected") or ""),
    )


def _wiki_sizes(ws: Workspace) -> list[WikiSize]:
    sizes = []
    for tag in sorted(ws.refs(f"refs/tags/{ROUND_TAG}")):
        number = tag[len(ROUND_TAG) :]
        if number.isdigit():
            files = ws.read_files(tag, "wiki")
            pages = read_pages(files)
            sizes.append(
                WikiSize(
                    int(number),
                    len(pages),
                    sum(page.active for page in pages.values()),
                    sum(tokens(text) for path, text in files.items() if path.startswith("patterns/")),
                )
            )
    return sizes


def _round_costs(ws: Workspace) -> list[RoundCost]:
    """Score and cost per validated round, oldest first, one row per round in its final state (a
    person's later decision replaces the gate's `pending`), and one per manual rollback."""
    rows: list[RoundCost] = []
    at: dict[int, int] = {}
    for commit in reversed(ws.log(MAIN)):
        meta = commit.meta
        if meta.step == Step.ROLLBACK and meta.round is not None:
            rows.append(
                RoundCost(meta.round, meta.skill or "", Decision.ROLLED_BACK.value, "", *(None,) * 4, is_rollback=True)
            )
        if meta.step != Step.GATE or meta.round is None or meta.score is None:
            continue
        cost = _gate_cost(ws, commit, meta.round)
        if meta.round in at:
            earlier = rows[at[meta.round]]
            events = earlier.events + ((cost.decision,) if cost.decision not in earlier.events[-1:] else ())
            rows[at[meta.round]] = replace(cost, events=events)
        else:
            at[meta.round] = len(rows)
            rows.append(replace(cost, events=(cost.decision,) if cost.decision else ()))
    return rows


def _gate_cost(ws: Workspace, gate: Commit, number: int) -> RoundCost:
    meta = gate.meta
    if meta.cost_rule is not None and meta.cost_unit is not None:
        unit, candidate, incumbent = meta.cost_unit.value, meta.cost_candidate, meta.cost_main
    else:
        story = round_story(ws, number)
        unit = CostUnit.TOKENS.value
        candidate = _mean([row.get("tokens") for row in story.validation if row.get("failure") != "infra"])
        found = find_evaluation(ws, gate.parents[0], meta.incumbent_fingerprint or "")
        incumbent = _mean(list(found[1].tokens.values())) if found else None
    decision = meta.decision.value if meta.decision else ""
    return RoundCost(
        number,
        meta.skill or "",
        decision,
        unit,
        meta.score,
        meta.incumbent,
        candidate,
        incumbent,
        never_loaded=bool(meta.never_loaded),
    )


def _mean(values: Iterable[object]) -> float | None:
    numbers = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(numbers) / len(numbers) if numbers else None


def _incumbent_scores(ws: Workspace, number: int) -> dict[str, float]:
    """Per task, the incumbent's scores the round's gate compared the candidate with."""
    gate = next((c for c in ws.log(MAIN) if c.meta.round == number and c.meta.step == Step.GATE), None)
    if gate is None or not gate.meta.incumbent_fingerprint:
        return {}
    found = find_evaluation(ws, gate.parents[0], gate.meta.incumbent_fingerprint)
    return found[1].scores if found else {}


def render_report(data: ReportData, title: str, live: str | None = None) -> str:
    """The page; with `live` (the workspace's version, see `history.live`) the one the live
    report serves, which loads plotly.js from the server and refreshes itself as the run goes."""
    import plotly.graph_objects as go

    figures: dict[str, Figure] = {
        "val": _val_figure(go, data.rounds),
        "cost": _cost_figure(go, data.rounds),
        "tradeoff": _tradeoff_figure(go, data.costs),
        "skills": _skills_figure(go, data.rounds),
        "wiki": _wiki_figure(go, data.wiki),
    }
    if data.uplift is not None:
        figures["uplift"] = uplift_figure(go, data.uplift)
    charts = {
        name: figure.to_html(
            full_html=False,
            include_plotlyjs=index == 0 and live is None,  # plotly.js inlined once
            config={"displaylogo": False},
            div_id=f"chart-{name}",
        )
        for index, (name, figure) in enumerate(figures.items())
    }
    differences = uplift_differences(data.uplift) if data.uplift is not None else []
    return render("report.html", title=title, data=data, charts=charts, live=live, differences=differences)


def tasks_folder(out: Path) -> Path:
    """Where the report at `out` keeps its task pages: `<name>-tasks/` beside it."""
    return out.parent / f"{out.stem}-tasks"


def write_report(ws: Workspace, out: Path) -> Path:
    """The report at `out`, and beside it, in `<name>-tasks/`, one page per task of the latest
    validation, which its row links to."""
    out = Path(out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    data = report_data(ws)
    if data.validated_round is not None and data.tasks:
        folder = tasks_folder(out)
        folder.mkdir(exist_ok=True)
        for task in data.tasks:
            name = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', task.id)}.html"
            lines = transcript_lines(task_view(ws, data.validated_round, task.id))
            title = f"round {data.validated_round}, task {task.id}"
            page = f"<!DOCTYPE html><meta charset='utf-8'><title>{escape(title)}</title>"
            (folder / name).write_text(f"{page}<pre>{escape(chr(10).join(lines))}</pre>\n", encoding="utf-8")
            data.task_pages[task.id] = f"{folder.name}/{name}"
    out.write_text(render_report(data, ws.root.name), encoding="utf-8")
    return out


def _layout(go: ModuleType, title: str, **axes: object) -> object:
    return go.Layout(
        title=title,
        height=360,
        margin={"l": 60, "r": 30, "t": 50, "b": 45},
        template="plotly_white",
        legend={"orientation": "h", "y": -0.2},
        **axes,
    )


def _val_figure(go: ModuleType, rows: list[RoundRow]) -> Figure:
    rounds = [row for row in rows if row.action != Step.ROLLBACK]
    figure: Figure = go.Figure(
        layout=_layout(
            go,
            "Validation score per round",
            xaxis={"title": "round", "dtick": 1},
            yaxis={"title": "val score", "range": score_range(rounds), "tickformat": ".3f"},
        )
    )
    figure.add_trace(
        go.Scatter(
            x=[r.round for r in rounds],
            y=[r.incumbent for r in rounds],
            mode="lines+markers",
            name="incumbent at the round's start",
            line={"color": "#1565c0"},
        )
    )
    for decision in sorted({r.decision for r in rounds if r.decision}):
        picked = [r for r in rounds if r.decision == decision]
        figure.add_trace(
            go.Scatter(  # a round with no candidate score is marked on the incumbent's line
                x=[r.round for r in picked],
                y=[r.incumbent if r.val is None else r.val for r in picked],
                mode="markers",
                name=f"candidate: {decision}",
                marker=decision_marker(decision),
                text=[f"{r.action} {r.skill}" for r in picked],
                hovertemplate="r%{x}: %{y:.3f} %{text}<extra></extra>",
            )
        )
    return figure


def score_range(rounds: list[RoundRow]) -> list[float]:
    """The val chart's y range: fitted to the scores plotted (gains of +0.007 stay visible), with a
    small margin; the whole 0-1 scale when there is nothing to plot."""
    scores = [score for row in rounds for score in (row.incumbent, row.val) if score is not None]
    if not scores:
        return [-0.05, 1.05]
    low, high = min(scores), max(scores)
    margin = max((high - low) * SCORE_MARGIN, MIN_SCORE_MARGIN)
    return [low - margin, high + margin]


def _cost_figure(go: ModuleType, rows: list[RoundRow]) -> Figure:
    rounds = [row for row in rows if row.action != Step.ROLLBACK]
    figure: Figure = go.Figure(
        layout=_layout(
            go,
            "Cost per round",
            xaxis={"title": "round", "dtick": 1},
            yaxis={"title": "USD", "rangemode": "tozero"},
            yaxis2={"title": "tokens", "overlaying": "y", "side": "right", "rangemode": "tozero"},
        )
    )
    figure.add_trace(
        go.Bar(
            x=[r.round for r in rounds], y=[r.cost_usd for r in rounds], name="cost (USD)", marker={"color": "#ef6c00"}
        )
    )
    figure.add_trace(
        go.Scatter(
            x=[r.round for r in rounds],
            y=[r.tokens for r in rounds],
            name="tokens",
            yaxis="y2",
            mode="lines+markers",
            line={"color": "#455a64"},
        )
    )
    return figure


def _tradeoff_figure(go: ModuleType, costs: list[RoundCost]) -> Figure:
    """Val score against mean per-task cost: each round's incumbent joined to its candidate."""
    unit = costs[-1].unit if costs else CostUnit.TOKENS.value
    figure: Figure = go.Figure(
        layout=_layout(
            go,
            "Score against cost per val task",
            xaxis={"title": f"{unit} per val task", "rangemode": "tozero"},
            yaxis={"title": "val score", "tickformat": ".3f"},
        )
    )
    plotted = [c for c in costs if c.candidate_cost is not None and c.incumbent_cost is not None and not c.is_rollback]
    for cost in plotted:
        figure.add_trace(
            go.Scatter(
                x=[cost.incumbent_cost, cost.candidate_cost],
                y=[cost.incumbent_score, cost.candidate_score],
                mode="lines",
                line={"color": "#b0bec5", "dash": "dot"},
                showlegend=False,
                hoverinfo="skip",
            )
        )
    figure.add_trace(
        go.Scatter(
            x=[c.incumbent_cost for c in plotted],
            y=[c.incumbent_score for c in plotted],
            mode="markers",
            name="incumbent",
            marker={"size": 9, "color": "#1565c0"},
            text=[f"r{c.round}" for c in plotted],
            hovertemplate="%{text} incumbent: %{y:.3f} at %{x:.6g}<extra></extra>",
        )
    )
    for decision in sorted({c.decision for c in plotted}):
        picked = [c for c in plotted if c.decision == decision]
        figure.add_trace(
            go.Scatter(
                x=[c.candidate_cost for c in picked],
                y=[c.candidate_score for c in picked],
                mode="markers+text",
                name=f"candidate: {decision}",
                marker=decision_marker(decision),
                text=[f"r{c.round}" for c in picked],
                textposition="top center",
                hovertemplate="%{text}: %{y:.3f} at %{x:.6g}<extra></extra>",
            )
        )
    return figure


def _skills_figure(go: ModuleType, rows: list[RoundRow]) -> Figure:
    changes = [row for row in rows if row.skill]
    skills = sorted({row.skill for row in changes})
    figure: Figure = go.Figure(
        layout=_layout(
            go,
            "Skills timeline",
            xaxis={"title": "round", "dtick": 1},
            yaxis={"title": "", "categoryorder": "array", "categoryarray": skills, "type": "category"},
        )
    )
    for action in sorted({row.action for row in changes}):
        picked = [row for row in changes if row.action == action]
        figure.add_trace(
            go.Scatter(
                x=[r.round for r in picked],
                y=[r.skill for r in picked],
                mode="markers",
                name=action,
                marker={
                    "size": 14,
                    "symbol": ACTION_SYMBOLS.get(action, "square"),
                    "color": [DECISION_COLOURS.get(r.decision, OTHER_COLOUR) for r in picked],
                },
                text=[r.decision for r in picked],
                hovertemplate="r%{x} " + action + " %{y}: %{text}<extra></extra>",
            )
        )
    for decision in sorted({row.decision for row in changes if row.decision in COLOUR_NAMES}):
        figure.add_trace(
            go.Scatter(  # a legend entry for what each colour means, drawing nothing
                x=[None],
                y=[None],
                mode="markers",
                name=f"{COLOUR_NAMES[decision]}: {decision.replace('_', ' ')}",
                marker={"size": 14, "symbol": "square", "color": DECISION_COLOURS[decision]},
                hoverinfo="skip",
            )
        )
    return figure


def _wiki_figure(go: ModuleType, sizes: list[WikiSize]) -> Figure:
    figure: Figure = go.Figure(
        layout=_layout(
            go,
            "Wiki growth",
            xaxis={"title": "round", "dtick": 1},
            yaxis={"title": "pattern pages", "rangemode": "tozero"},
            yaxis2={"title": "tokens", "overlaying": "y", "side": "right", "rangemode": "tozero"},
        )
    )
    rounds = [size.round for size in sizes]
    figure.add_trace(go.Bar(x=rounds, y=[s.pages for s in sizes], name="pages", marker={"color": "#90caf9"}))
    figure.add_trace(go.Bar(x=rounds, y=[s.active for s in sizes], name="active pages", marker={"color": "#1e88e5"}))
    figure.add_trace(
        go.Scatter(
            x=rounds,
            y=[s.tokens for s in sizes],
            name="tokens",
            yaxis="y2",
            mode="lines+markers",
            line={"color": "#37474f"},
        )
    )
    return figure


def uplift_figure(go: ModuleType, result: UpliftResult) -> Figure:
    """A forest plot: each arm's difference from `none` and each of main's skills' contribution
    (main's mean minus main's without it), with their 95% intervals."""
    rows = [(f"{row.kind.value} {row.name}", row.value, row.interval) for row in uplift_differences(result)]
    figure: Figure = go.Figure(
        layout=_layout(
            go,
            f"Uplift on {result.split} ({result.tasks} tasks x {result.trials} trials): arms minus no skills, "
            "skills' contribution (main minus main without it)",
            xaxis={"title": "score difference (95% interval): positive helps", "zeroline": True},
            yaxis={"autorange": "reversed"},
        )
    )
    figure.add_trace(
        go.Scatter(
            x=[value for _, value, _ in rows],
            y=[name for name, _, _ in rows],
            mode="markers",
            marker={"size": 11, "color": ["#1e88e5" if name.startswith("arm") else "#37474f" for name, _, _ in rows]},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [high - value for _, value, (_, high) in rows],
                "arrayminus": [value - low for _, value, (low, _) in rows],
            },
            name="difference",
        )
    )
    return figure
