"""Write tests/golden/workspace-v1.bundle: a workspace as trailer schema 1 leaves it, which every
later wikiskill must still read (tests/e2e/test_golden.py).

It is made through the CLI, in its own processes, against the scripted example-qa world
(tests/scripted.py) on the local fake server, and holds every kind of commit a default run,
`rollback`, `ingest` and `--commit-human-edits` write, plus a plain user commit:

1. spell-letters is proposed and accepted (val 0.500 -> 0.833);
2. useless-hint is proposed and rejected (no better than 0.833);
   then spell-letters is rolled back, a session is ingested, `wiki.consolidate_every: 3` is
   committed by hand and a wiki file is edited (committed as a `human` step by the next evolve);
3. spell-letters is proposed again and accepted, and the wiki is consolidated;
4. the proposer finds nothing to do (no_action).

Run it only to add a bundle for a new schema version, beside this one:
    python tests/golden/make_golden.py [OUT]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE.parent)]

from scripted import SPELL, USELESS, ScriptedWorld, create  # noqa: E402
from wikiskill.testing.fakeserver import FakeOpenAIServer  # noqa: E402

BUNDLE = HERE / "workspace-v1.bundle"
SESSION = HERE.parent / "sessions" / "7c0e4a52-91d3-4b7e-a6f4-2f3c9d8e1b60.jsonl"
PROPOSALS = {1: create("spell-letters", SPELL), 2: create("useless-hint", USELESS), 3: create("spell-letters", SPELL)}


def wikiskill(ws: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "wikiskill", "-C", str(ws), *args], check=True, env=env)


def git(ws: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", "-C", str(ws), *args], check=True, env=env, stdout=subprocess.DEVNULL)


def make(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedWorld(PROPOSALS)) as server:
        env = {**os.environ, "HOME": tmp, "GIT_CONFIG_NOSYSTEM": "1", "PYTHONPATH": str(ROOT),
               "GIT_AUTHOR_NAME": "Golden Maker", "GIT_AUTHOR_EMAIL": "golden@example.invalid",
               "GIT_COMMITTER_NAME": "Golden Maker", "GIT_COMMITTER_EMAIL": "golden@example.invalid",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        ws = Path(tmp) / "ws"
        subprocess.run([sys.executable, "-m", "wikiskill", "init", str(ws), "--benchmark", "example-qa",
                        "--model", "openai/fake-model", "--api-base", server.base_url], check=True, env=env)
        wikiskill(ws, "evolve", "--rounds", "2", env=env)
        wikiskill(ws, "rollback", "spell-letters", env=env)
        wikiskill(ws, "ingest", str(SESSION), "--format", "claude-code", "--outcome", "failure", env=env)
        config = ws / "wikiskill.yaml"
        config.write_text(config.read_text(encoding="utf-8") + "\nwiki:\n  consolidate_every: 3\n", encoding="utf-8")
        git(ws, "commit", "-q", "-am", "Consolidate the wiki every third round", env=env)
        log = ws / "wiki" / "log.md"
        log.write_text(log.read_text(encoding="utf-8") + "\nA note added by hand.\n", encoding="utf-8")
        wikiskill(ws, "evolve", "--rounds", "2", "--commit-human-edits", env=env)
        out.unlink(missing_ok=True)
        git(ws, "bundle", "create", str(out), "--all", env=env)


if __name__ == "__main__":
    make(Path(sys.argv[1]) if len(sys.argv) > 1 else BUNDLE)
    print(f"wrote {Path(sys.argv[1]) if len(sys.argv) > 1 else BUNDLE}")
