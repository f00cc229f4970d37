"""Workspaces with skills committed the way the harness commits them, for tests that need one."""

import signal
import time
from pathlib import Path

import yaml

from conftest import git
from wikiskill import api
from wikiskill.store.rounds import round_state
from wikiskill.store.workspace import Workspace, format_message

UNUSED_SERVER = "http://127.0.0.1:9/v1"
TOPICS = {
    "spell-letters": ("Reverse or spell words letter by letter.", "a task asks to write a word backwards"),
    "convert-units": ("Convert quantities to one unit before combining them.", "grams and kilograms are mixed"),
    "quote-shell-paths": ("Quote shell paths so spaces do not split them.", "a file name contains spaces"),
    "check-leap-years": ("Apply the full leap year rule.", "a date falls on February 29"),
    "retry-rate-limits": ("Wait for Retry-After when an API answers 429.", "an API says too many requests"),
}


def skill_md(name: str, description: str | None = None, when: str | None = None, extra: str = "") -> str:
    default_description, default_when = TOPICS.get(name, (f"Handle {name}.", f"{name} happens"))
    return (
        f"---\nname: {name}\ndescription: {description or default_description}\n---\n\n"
        f"## When to Apply\nWhen {when or default_when}.\n\n## When NOT to Apply\nOtherwise.\n\n"
        f"## Instructions\n1. Follow the {name} steps carefully.\n{extra}"
    )


def new_workspace(tmp_path: Path) -> Workspace:
    # `offline` plays interactive benchmarks only; no model is ever called in these tests (the
    # closed port stands for a local server, which needs no key)
    return api.init_workspace(
        tmp_path / "ws", benchmark="example-qa", model="openai/test-model", api_base=UNUSED_SERVER
    )


def commit_skills(
    ws: Workspace,
    names: list[str],
    round_number: int = 1,
    step: str = "gate",
    decision: str | None = "accepted",
    branch: str = "main",
    extra_parents: tuple[str, ...] = (),
    base: str | None = None,
) -> str:
    changes: dict[str, str | None] = {}
    for name in names:
        changes[f"skills/{name}/SKILL.md"] = skill_md(name)
        changes[f"skills/{name}/PURPOSE.md"] = (
            f"# {name}\n\n## Evolution History\n- r{round_number:03d} created: {name} was needed\n"
        )
    message = format_message(
        f"r{round_number} {step}: {', '.join(names)}", {"Round": round_number, "Step": step, "Decision": decision}
    )
    return ws.commit(changes, message, branch=branch, extra_parents=extra_parents, base=base)


def merge_skill(ws: Workspace, name: str, round_number: int) -> str:
    """What the gate does on acceptance: a proposal on skill/rNNN-name, merged --no-ff into main."""
    branch = f"skill/r{round_number:03d}-{name}"
    ws.create_branch(branch, "main")
    tip = commit_skills(ws, [name], round_number, step="propose", decision=None, branch=branch)
    merged = ws.merged_tree("main", tip)
    message = format_message(
        f"r{round_number} gate: accept {name}",
        {"Round": round_number, "Step": "gate", "Decision": "accepted", "Skill": name},
    )
    sha = ws.commit({}, message, base=merged, extra_parents=(tip,))
    ws.delete_branch(branch)
    return sha


def hears_ctrl_c() -> None:
    """`preexec_fn` for a child that is sent Ctrl-C: a shell without job control starts its
    background commands (such as a test run) with SIGINT ignored, every child inherits that, and a
    Python started so never turns SIGINT into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def until(condition, timeout: float = 5.0):
    """Poll `condition` until it is truthy (returned) or `timeout` passes (assertion error)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"condition not met within {timeout} s")


def write(root: Path, path: str, text: str) -> None:
    """Write a file the way a person would, creating its folders."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def first_parent_steps(ws: Path) -> list[str | None]:
    out = git(ws, "log", "--first-parent", "--reverse", "--format=%(trailers:key=Wikiskill-Step,valueonly)%x1e", "main")
    return [record.strip() or None for record in out.split("\x1e")[:-1]]


def gate_of(ws: Workspace, number: int):
    return round_state(ws, number).gate


def edit_config(ws: Workspace, **changes) -> None:
    path = ws.root / "wikiskill.yaml"
    data = yaml.safe_load(path.read_text())
    for dotted, value in changes.items():
        section, key = dotted.split(".")
        data.setdefault(section, {})[key] = value
    path.write_text(yaml.safe_dump(data))
