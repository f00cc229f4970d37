"""Small Harbor-format suites written into a test's folder, and the docker clean-up they need:
every task shares one environment (so one image), reverses a word into /app/answer.txt, and its
tests/ holds a marker that no agent may ever see."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from pathlib import Path

from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.run.soundness import VERDICTS_FILE, task_digest

BASE_IMAGE = "wikiskill/base:bookworm"
WORDS = {"rev-cat": "cat", "rev-dog": "dog", "rev-owl": "owl", "rev-emu": "emu"}
MARKER = "HIDDEN-TESTS-MARKER"
IDS = {"train": ["rev-cat", "rev-dog"], "val": ["rev-owl", "rev-emu"]}
"""The split the tests' wikiskill.yaml gives the four word tasks."""


def marker(task_id: str) -> str:
    return f"{MARKER}-{task_id}"


def write_harbor_task(
    root: Path,
    task_id: str,
    word: str,
    failing: str = "",
    category: str = "words",
    toml: str | None = None,
    dockerfile: str | None = None,
    agent_timeout: float = 120.0,
    nonce: str = "",
    storage_mb: int | None = None,
) -> Path:
    """A Terminal-Bench-2-style task folder: reverse `word` into /app/answer.txt; its verifier
    prints `failing` when the answer is wrong and writes reward.txt. `nonce`, a comment in the
    Dockerfile, makes the environment (so the image tag) the caller's own."""
    storage = f"storage_mb = {storage_mb}\n" if storage_mb else ""
    folder = root / task_id
    (folder / "environment").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "solution").mkdir()
    (folder / "task.toml").write_text(
        toml
        if toml is not None
        else (
            f'version = "1.0"\n\n[metadata]\ncategory = "{category}"\ndifficulty = "easy"\n\n'
            f"[agent]\ntimeout_sec = {agent_timeout}\n\n[verifier]\ntimeout_sec = 60.0\n\n"
            "[environment]\nbuild_timeout_sec = 300.0\ncpus = 1\nmemory_mb = 512\nallow_internet = false\n"
            f"{storage}"
        )
    )
    (folder / "instruction.md").write_text(f"Write the word '{word}' backwards into /app/answer.txt.\n")
    (folder / "environment" / "Dockerfile").write_text(
        dockerfile
        if dockerfile is not None
        else f"# {nonce}\nFROM {BASE_IMAGE}\nWORKDIR /app\nRUN echo ready > /app/README\n"
    )
    (folder / "tests" / "marker.txt").write_text(marker(task_id) + "\n")
    (folder / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        f'if [ "$(cat /app/answer.txt 2>/dev/null)" = "{word[::-1]}" ]; then\n'
        "  echo PASSED; echo 1 > /logs/verifier/reward.txt\n"
        f"else\n  echo 'FAILED test_reversed {failing}'; echo 0 > /logs/verifier/reward.txt\nfi\n"
    )
    (folder / "solution" / "solve.sh").write_text(f"#!/bin/bash\nprintf %s {word[::-1]} > /app/answer.txt\n")
    return folder


def harbor_suite(root: Path, failing: dict[str, str] | None = None) -> Path:
    """The four word tasks, sharing an environment of their own (no other suite's image)."""
    suite = root / "suite"
    nonce = uuid.uuid4().hex
    for task_id, word in WORDS.items():
        write_harbor_task(suite, task_id, word, (failing or {}).get(task_id, ""), nonce=nonce)
    return suite


def word_of(question: str) -> str:
    return re.search(r"Write the word '(\w+)' backwards", question).group(1)


def containers_of(workspace: Path) -> list[str]:
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=wikiskill.workspace={workspace.resolve()}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.split()


def image_id(tag: str) -> str | None:
    found = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else None


def remove_images(tags: list[str]) -> None:
    """Remove the images a test built (and only those), and any container of a workspace it made."""
    if tags:
        subprocess.run(["docker", "rmi", "-f", *tags], capture_output=True)


def tag_of(task_folder: Path) -> str:
    """The image tag wikiskill builds for the task folder's environment."""
    from wikiskill.environments.images import IMAGE_REPOSITORY, environment_digest

    return f"{IMAGE_REPOSITORY}:{environment_digest(task_folder / 'environment')[:12]}"


UNREACHABLE = "http://127.0.0.1:9/v1"
"""A model endpoint for commands that must refuse before any model call."""


def init_harbor(workspace: Path, suite: Path, api_base: str = UNREACHABLE, *more: str):
    """`wikiskill init WORKSPACE --benchmark harbor:SUITE` with the fake model, through the CLI
    runner; `more` are further options (`--agent qwen-code`)."""
    from typer.testing import CliRunner

    from wikiskill.cli import app

    arguments = ["init", str(workspace), "--benchmark", f"harbor:{suite}", "--model", "openai/fake"]
    return CliRunner().invoke(app, [*arguments, "--api-base", api_base, *more])


def idle_engine(folder: Path, monkeypatch) -> None:
    """A `docker` client on PATH whose daemon answers `docker info` and holds nothing (no
    container, no network), for tests that read a Harbor suite but run no container: init and
    the pre-flight refuse a suite of containers without a running engine."""
    folder.mkdir(parents=True, exist_ok=True)
    client = folder / "docker"
    client.write_text('#!/bin/sh\n[ "$1" = info ] && echo 28.0\nexit 0\n')
    client.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def keep_verdicts(suite: HarborSuite, state: Path) -> None:
    """A state folder whose kept verdicts, by task digest, say rev-cat is sound and rev-owl is
    not, each "<task> was checked": what an earlier command's container checks left."""
    state.mkdir()
    kept = {
        task_digest(suite.by_id[task_id]): {"sound": task_id == "rev-cat", "reason": f"{task_id} was checked"}
        for task_id in ("rev-cat", "rev-owl")
    }
    (state / VERDICTS_FILE).write_text(json.dumps(kept))
