"""Harbor task folders run with the plain docker CLI, as Harbor runs them: the image built from
environment/, the agent's part (nothing, or solution/solve.sh) in a fresh container, and only then
tests/ copied in and test.sh run, its reward read from /logs/verifier. Everything made carries
the label `LABEL=<run>` and is removed by `DockerRun.close`."""

from __future__ import annotations

import json
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

LABEL = "org.wikiskill.test"


def docker(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)


def checked(*args: str, timeout: float = 120) -> str:
    done = docker(*args, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


@dataclass
class Trial:
    reward: float
    tests_seen_before_verifier: bool
    verifier_output: str


@dataclass
class DockerRun:
    """The images and containers of one test, removed together."""

    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    images: list[str] = field(default_factory=list)

    def build(self, task: Path, **build_args: str) -> str:
        image = f"wikiskill-test/{task.name}:{self.run}"
        extra = [part for name, value in build_args.items() for part in ("--build-arg", f"{name}={value}")]
        checked(
            "build",
            "-q",
            "--network",
            "none",
            "--label",
            f"{LABEL}={self.run}",
            *extra,
            "-t",
            image,
            str(task / "environment"),
            timeout=300,
        )
        self.images.append(image)
        return image

    def trial(self, task: Path, image: str, solve: bool) -> Trial:
        """One trial in a fresh container: solve.sh when `solve`, else nothing; then the verifier."""
        container = checked(
            "run",
            "-d",
            "--network",
            "none",
            "--label",
            f"{LABEL}={self.run}",
            "--cpus",
            "1",
            "--memory",
            "512m",
            image,
            "sleep",
            "infinity",
        ).strip()
        try:
            if solve:
                checked("cp", f"{task / 'solution'}/.", f"{container}:/solution")
                checked("exec", container, "bash", "/solution/solve.sh")
            seen = docker("exec", container, "test", "-e", "/tests").returncode == 0
            checked("exec", container, "mkdir", "-p", "/logs/verifier")
            checked("cp", f"{task / 'tests'}/.", f"{container}:/tests")
            verifier = docker("exec", container, "bash", "/tests/test.sh", timeout=60)
            return Trial(self._reward(container), seen, verifier.stdout + verifier.stderr)
        finally:
            docker("rm", "-f", container)

    @staticmethod
    def _reward(container: str) -> float:
        text = docker("exec", container, "cat", "/logs/verifier/reward.txt")
        if text.returncode == 0:
            return float(text.stdout.strip())
        return float(json.loads(checked("exec", container, "cat", "/logs/verifier/reward.json"))["reward"])

    def close(self) -> None:
        left = checked("ps", "-aq", "--filter", f"label={LABEL}={self.run}").split()
        if left:
            docker("rm", "-f", *left)
        if self.images:
            docker("rmi", "-f", *self.images)
