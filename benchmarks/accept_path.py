"""The files the workspace enters on its way through `accept`: a real `api.accept` of a pending
candidate in the scripted world of tests/scripted.py, traced with `sys.setprofile`.

    python benchmarks/accept_path.py [--keep DIR] [--calls]

A workspace under `gate.review: human` is evolved one round (round 1's spell-letters waits on
pending/) and the candidate accepted: as it was validated (`plain`), and in a second workspace
after a person's own skill moved main, so that accept validates it again first (`revalidated`).
A function of wikiskill's enters the path when one of its arguments (its `self` included) holds
the Workspace: is it, or reaches it through attributes (a harness, a step's context, a
publisher); the figure is the number of distinct files of those functions. The same is counted
for the Workspace handed over itself, and how often the path goes from a file outside store/
back into store/.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the scripted world and its in-process helpers

from inprocess import WorldModel, evolve_scripted, scripted_workspace  # noqa: E402
from scripted import ScriptedWorld, skill_md  # noqa: E402
from wikiskill import api  # noqa: E402
from wikiskill.api import RunOptions  # noqa: E402
from wikiskill.loop.review import ReviewDecision  # noqa: E402
from wikiskill.store.workspace import Workspace  # noqa: E402
from workspaces import edit_config  # noqa: E402

PACKAGE = ROOT / "wikiskill"
REACH = 3
"""Attributes followed from an argument to the Workspace; more finds no other file."""


def _options(world: ScriptedWorld) -> RunOptions:
    model = WorldModel(world)
    return RunOptions(model_factory=lambda role: model)


def _arguments(frame: FrameType) -> list[object]:
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    return [frame.f_locals.get(name) for name in code.co_varnames[:count]]


def _holds_workspace(value: object, hops: int) -> bool:
    """The Workspace itself, or an object that reaches it through at most `hops` attributes."""
    if isinstance(value, Workspace):
        return True
    attributes = getattr(value, "__dict__", None)
    if hops == 0 or not isinstance(attributes, dict):
        return False
    return any(_holds_workspace(held, hops - 1) for held in attributes.values())


def traced(run: Callable[[], object], hops: int) -> list[str]:
    """The wikiskill files, relative to the package, of each call whose arguments reach a
    Workspace through at most `hops` attributes, in order."""
    path: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        filename = frame.f_code.co_filename
        if not filename.startswith(str(PACKAGE)):
            return
        if any(_holds_workspace(value, hops) for value in _arguments(frame)):
            path.append(str(Path(filename).relative_to(PACKAGE)))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return path


def store_reentries(path: list[str]) -> int:
    inside, entries = False, 0
    for file in path:
        in_store = file.startswith("store/")
        entries += in_store and not inside
        inside = in_store
    return entries


def pending_workspace(root: Path, moved: bool) -> Workspace:
    """A workspace whose round-1 spell-letters waits for review; `moved`: a person has since
    written a skill of their own on main (committed by `lock`), so accept validates it again."""
    ws = scripted_workspace(root)
    edit_config(ws, **{"gate.review": "human"})
    ws.commit_working_tree(["wikiskill.yaml"], "review by a person\n")
    evolve_scripted(ws, rounds=1)
    if moved:
        (ws.root / "skills" / "by-hand").mkdir(parents=True)
        (ws.root / "skills" / "by-hand" / "SKILL.md").write_text(skill_md("by-hand", "a person's own skill"))
        api.lock(ws, "by-hand")
    return ws


def accepted(ws: Workspace, hops: int) -> tuple[ReviewDecision, list[str]]:
    """`accept` of the waiting spell-letters, and the path traced through it."""
    decisions: list[ReviewDecision] = []
    path = traced(lambda: decisions.append(api.accept(ws, "spell-letters", _options(ScriptedWorld()))), hops)
    return decisions[0], path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="build the workspaces here and keep them")
    parser.add_argument("--calls", action="store_true", help="list each file with its number of calls")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="accept-path-"))
    try:
        for name, moved in (("plain", False), ("revalidated", True)):
            for hops, how in ((REACH, "held"), (0, "handed over itself")):
                decision, path = accepted(pending_workspace(base / f"{name}-{hops}", moved), hops)
                files = sorted(set(path))
                print(f"{name} ({decision.decision.value}, revalidated: {decision.revalidated}), workspace {how}: "
                      f"enters {len(files)} files, goes back into store/ {store_reentries(path)} times")  # fmt: skip
                for file in files:
                    print(f"  {file}" + (f"  ({path.count(file)} calls)" if args.calls else ""))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
