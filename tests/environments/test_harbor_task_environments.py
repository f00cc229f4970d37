"""Harbor tasks written the way published suites write them, run in real containers: a pinned
image beside a Dockerfile, the env tables, the older memory string, a task that needs the
network on an engine without a bridge, an allowlist, a compose sidecar (and what a kill -9 of
its run leaves), and the suite's own skills removed or kept. Each task's verifier checks what
it is about, so `check_suite` scoring its oracle 1 and nop 0 is the proof."""

import asyncio
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import needs_compose, needs_docker
from harborsuites import BASE_IMAGE, containers_of, init_harbor, remove_images, tag_of, write_harbor_task
from wikiskill import api
from wikiskill.benchmarks.harbor import HarborSuite, HarborTaskConfig
from wikiskill.benchmarks.settings import HarborSettings, SuiteSkills
from wikiskill.core.errors import InfrastructureError
from wikiskill.environments.compose import PROJECT_LABEL
from wikiskill.environments.orphans import sweep_orphans
from wikiskill.environments.runtime import open_runtime
from wikiskill.environments.settings import EnvironmentSettings
from wikiskill.roles.reference_agent import OracleAgent
from wikiskill.run.harbor_tasks import HarborTaskAgent, open_setup
from wikiskill.run.suite_check import check_suite
from wikiskill.store.traces import FailureKind
from workspaces import until

OFFLINE = "[environment]\nallow_internet = false\n"
ANSWER_CHECK = '[ "$(cat /app/answer.txt 2>/dev/null)" = "{word}" ]'


def no_bridge() -> bool:
    return subprocess.run(["docker", "network", "inspect", "bridge"], capture_output=True).returncode != 0


def task(root: Path, task_id: str, toml: str, check: str = "true", solve: str = "", dockerfile: str | None = None):
    """A word task (reverse `task_id`'s last word) whose verifier also requires `check`."""
    word = task_id.rsplit("-", 1)[-1]
    folder = write_harbor_task(
        root, task_id, word, toml=f'version = "1.0"\n{toml}', dockerfile=dockerfile or default_dockerfile()
    )
    answer = ANSWER_CHECK.format(word=word[::-1])
    (folder / "tests" / "test.sh").write_text(
        f"#!/bin/bash\nmkdir -p /logs/verifier\nif {answer} && {check}; then echo 1; else echo 0; fi"
        " > /logs/verifier/reward.txt\n"
    )
    if solve:
        (folder / "solution" / "solve.sh").write_text(f"#!/bin/bash\n{solve}\n")
    return folder


def default_dockerfile(extra: str = "") -> str:
    return f"# {uuid.uuid4().hex}\nFROM {BASE_IMAGE}\nWORKDIR /app\n{extra}"


def checked(suite: Path, **settings) -> dict:
    """`check_suite`'s verdicts: the oracle and nop on each task."""
    harbor = HarborSettings(**settings)
    setup = open_setup(EnvironmentSettings(), suite.parent / "cache", workspace=suite, harbor=harbor)
    try:
        return {check.task_id: check for check in asyncio.run(check_suite(HarborSuite(suite, harbor), setup))}
    finally:
        remove_images(setup.images.built)


def oracle(suite: Path, **settings) -> dict[str, float | str]:
    """The oracle's score on each task, or the infrastructure failure that stopped it: one
    container per task, where `checked` needs two."""
    harbor = HarborSettings(**settings)
    loaded = HarborSuite(suite, harbor)
    setup = open_setup(EnvironmentSettings(), suite.parent / "cache", workspace=suite, harbor=harbor)
    agent = HarborTaskAgent(OracleAgent(), loaded, setup)

    async def one(task_id: str) -> float | str:
        try:
            return (await agent.run(loaded.as_task(loaded.by_id[task_id], "train"))).score
        except InfrastructureError as exc:
            return str(exc)

    async def every() -> list[float | str]:
        return await asyncio.gather(*(one(task_id) for task_id in sorted(loaded.by_id)))

    try:
        return dict(zip(sorted(loaded.by_id), asyncio.run(every()), strict=True))
    finally:
        remove_images(setup.images.built)


def test_the_older_memory_and_storage_strings_are_read_as_harbor_reads_them():
    config = HarborTaskConfig.model_validate({"environment": {"memory": "4G", "storage": "512M"}})
    assert (config.environment.memory_mb, config.environment.storage_mb) == (4096, 512)


@needs_docker
def test_a_pinned_image_beside_a_dockerfile_is_run_and_force_build_builds_instead(tmp_path):
    suite = tmp_path / "suite"
    rebuilt = default_dockerfile("RUN touch /rebuilt\n")
    task(
        suite,
        "pin-cat",
        f'[environment]\ndocker_image = "{BASE_IMAGE}"\nallow_internet = false\n',
        check="[ ! -e /rebuilt ]",
        solve="mkdir -p /app && printf tac > /app/answer.txt",
        dockerfile=rebuilt,
    )
    task(suite, "absent-dog", '[environment]\ndocker_image = "wikiskill-test/never-built:1"\nallow_internet = false\n')

    pinned = oracle(suite)
    assert pinned["pin-cat"] == 1.0, pinned
    assert "the pinned image wikiskill-test/never-built:1" in pinned["absent-dog"]
    assert "cannot be pulled" in pinned["absent-dog"] and "harbor.force_build" in pinned["absent-dog"]
    assert oracle(suite, force_build=True)["pin-cat"] == 0.0  # the Dockerfile's image: /rebuilt is there
    assert containers_of(suite) == []


@needs_docker
def test_the_env_tables_reach_the_environment_the_solution_and_the_verifier(tmp_path, monkeypatch):
    monkeypatch.setenv("I37_FROM_HOST", "host")
    suite = tmp_path / "suite"
    toml = textwrap.dedent(
        """
        [environment]
        allow_internet = false
        memory = "256M"
        [environment.env]
        FROM_HOST = "${I37_FROM_HOST}"
        FALLBACK = "${I37_SURELY_UNSET:-fallback}"
        [solution.env]
        SOLVE_WORD = "tae"
        [verifier.env]
        EXPECTED = "host-fallback"
        """
    )
    limit = "$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
    check = f'[ "$FROM_HOST-$FALLBACK" = "$EXPECTED" ] && [ "{limit}" = 268435456 ] && [ -z "$SOLVE_WORD" ]'
    solve = 'mkdir -p /app && [ "$FROM_HOST" = host ] && printf %s "$SOLVE_WORD" > /app/answer.txt'
    task(suite, "env-eat", toml, check=check, solve=solve)
    assert oracle(suite) == {"env-eat": 1.0}


@needs_docker
@pytest.mark.skipif(not no_bridge(), reason="this engine has a bridge network")
def test_a_task_that_needs_the_network_on_an_engine_without_a_bridge_is_infra_saying_so(tmp_path):
    suite = tmp_path / "suite"
    task(suite, "unset-cat", "[environment]\n")  # unset: public, as in Harbor
    task(suite, "verify-dog", '[environment]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "public"\n')
    task(suite, "allow-owl", '[agent]\nallowed_hosts = ["pypi.org"]\n' + OFFLINE)
    task(suite, "closed-emu", '[environment]\nnetwork_mode = "allowlist"\n')  # no host: no egress
    checks = checked(suite)
    assert (
        "its agent phase needs the network (public); this engine has no bridge network" in checks["unset-cat"].problem
    )
    assert "its verifier phase needs the network (public)" in checks["verify-dog"].problem
    assert (
        "allows only pypi.org" in checks["allow-owl"].problem
        and "cannot enforce an allowlist" in checks["allow-owl"].problem
    )
    assert checks["closed-emu"].sound, checks["closed-emu"]
    assert all(checks[name].oracle is None for name in ("unset-cat", "verify-dog", "allow-owl"))  # never a score


@needs_docker
@pytest.mark.skipif(not no_bridge(), reason="this engine has a bridge network")
def test_init_counts_the_tasks_that_need_the_network_and_eval_records_them_as_infra(tmp_path):
    suite = tmp_path / "suite"
    task(suite, "net-cat", "[environment]\nallow_internet = true\n")
    task(suite, "off-dog", OFFLINE, solve="mkdir -p /app && printf god > /app/answer.txt")
    result = init_harbor(tmp_path / "ws", suite)
    assert result.exit_code == 0, result.output
    assert "Network: 1 of 2 tasks need it in some phase: this engine has no bridge network" in result.output
    ws = tmp_path / "ws"
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config.update({"harbor": {"ids": {"train": [], "val": ["net-cat", "off-dog"]}}, "agent": {"runner": "oracle"}})
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    try:
        evaluation = api.evaluate(api.open_workspace(ws), "val", ref="main")
    finally:
        remove_images([tag_of(suite / "off-dog")])
    runs = {trajectory.task_id: trajectory for trajectory in evaluation.runs[0]}
    assert runs["net-cat"].failure == FailureKind.INFRA  # out of the mean, never a 0
    assert "this engine has no bridge network" in runs["net-cat"].error
    assert runs["off-dog"].score == 1.0
    assert containers_of(ws) == []


COMPOSE = textwrap.dedent(
    """
    services:
      main:
        build:
          context: ${CONTEXT_DIR}
        image: ${MAIN_IMAGE_NAME}
        volumes:
          - ${HOST_VERIFIER_LOGS_PATH}:${ENV_VERIFIER_LOGS_PATH}
      words:
        image: ${MAIN_IMAGE_NAME}
        command: ["sh", "-c", "mkdir -p /srv && printf bat > /srv/word.txt && cd /srv && python3 -m http.server 8000"]
    """
)
FETCH = "import urllib.request; print(urllib.request.urlopen('http://words:8000/word.txt', timeout=2).read().decode())"


def compose_task(suite: Path, solve: str) -> Path:
    folder = task(
        suite,
        "side-bat",
        OFFLINE,
        check=f'[ "$(python3 -c "{FETCH}")" = bat ]',  # the sidecar is there for the verifier too
        solve=solve,
    )
    (folder / "environment" / "docker-compose.yaml").write_text(COMPOSE)
    return folder


def project_networks() -> list[str]:
    listed = subprocess.run(
        ["docker", "network", "ls", "--filter", f"label={PROJECT_LABEL}", "--format", "{{.Name}}"],
        capture_output=True,
        text=True,
    )
    return [name for name in listed.stdout.split() if name.startswith("wikiskill-")]


@needs_docker
@needs_compose
def test_a_compose_task_runs_in_main_beside_its_sidecar_and_leaves_nothing(tmp_path):
    suite = tmp_path / "suite"
    before = set(project_networks())
    reverse = FETCH.replace("print(", "print(''.join(reversed(").replace(".decode())", ".decode())), end='')")
    solve = f'mkdir -p /app; for i in $(seq 50); do python3 -c "{reverse}" > /app/answer.txt && break; sleep 0.2; done'
    compose_task(suite, solve)
    checks = checked(suite)
    assert checks["side-bat"].sound, checks["side-bat"]
    assert containers_of(suite) == [] and set(project_networks()) == before


@pytest.mark.slow
@needs_docker
@needs_compose
def test_a_compose_project_a_kill_9_left_is_swept_by_the_next_command(tmp_path):
    suite = tmp_path / "suite"
    before = set(project_networks())
    compose_task(suite, "sleep 120")
    script = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from wikiskill.benchmarks.harbor import HarborSuite
        from wikiskill.environments.settings import EnvironmentSettings
        from wikiskill.run.harbor_tasks import open_setup
        from wikiskill.run.suite_check import check_suite
        suite = Path({str(suite)!r})
        asyncio.run(check_suite(HarborSuite(suite), open_setup(EnvironmentSettings(), suite.parent / "c", suite)))
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    try:
        until(lambda: len(containers_of(suite)) == 2, timeout=120)
        time.sleep(1)
    finally:
        child.kill()
        child.wait()
    assert len(containers_of(suite)) == 2 and set(project_networks()) - before
    sweep_orphans(open_runtime(EnvironmentSettings().runtime), suite)
    assert containers_of(suite) == [] and set(project_networks()) == before


@needs_docker
def test_the_suites_own_skills_are_removed_from_the_image_unless_kept_and_enter_the_fingerprint(tmp_path):
    suite = tmp_path / "suite"
    dockerfile = default_dockerfile("COPY skills /root/.claude/skills\n")
    folder = task(
        suite, "skill-cat", OFFLINE, check="[ ! -e /root/.claude/skills/curated/SKILL.md ]", dockerfile=dockerfile
    )
    (folder / "environment" / "skills" / "curated").mkdir(parents=True)
    (folder / "environment" / "skills" / "curated" / "SKILL.md").write_text("---\nname: curated\n---\nhi\n")
    assert oracle(suite) == {"skill-cat": 1.0}
    assert oracle(suite, suite_skills=SuiteSkills.KEEP) == {"skill-cat": 0.0}  # the curated skill is there
    removed = HarborSuite(suite, HarborSettings()).setup_digest()
    assert HarborSuite(suite, HarborSettings(suite_skills=SuiteSkills.KEEP)).setup_digest() != removed


HEREDOC_DOCKERFILE = """FROM {base}
SHELL ["/bin/bash", "-c"]
WORKDIR /app
RUN <<EOF
echo built > /app/marker
[[ -n "$BASH_VERSION" ]] && echo bash > /app/shell
EOF
COPY <<greeting.txt /app/
hello world
greeting.txt
RUN python3 <<'PY' > /app/py.txt
print("py", end="")
PY
RUN <<-EOF
\t#!/usr/bin/env python3
\topen("/app/shebang.txt", "w").write("sb")
\tEOF
"""


@needs_docker
def test_a_heredoc_dockerfile_builds_whatever_builder_the_engine_has(tmp_path):
    suite = tmp_path / "suite"
    files = {"marker": "built", "shell": "bash", "greeting.txt": "hello world", "py.txt": "py", "shebang.txt": "sb"}
    check = " && ".join(f'[ "$(cat /app/{name})" = "{text}" ]' for name, text in files.items())
    dockerfile = f"# {uuid.uuid4().hex}\n" + HEREDOC_DOCKERFILE.format(base=BASE_IMAGE)
    task(suite, "heredoc-ant", OFFLINE, check=check, dockerfile=dockerfile)
    assert oracle(suite) == {"heredoc-ant": 1.0}
