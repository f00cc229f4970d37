"""The CLI presets by name (`agent.runner`), the executable each one runs, its version, and
what of the preset enters the evaluation fingerprint."""

from __future__ import annotations

import hashlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from ...contracts.coding_agent import CLI_PRESETS, CliPreset, CliRun
from ...core.errors import ConfigError
from ...core.parts import CLI_PRESET
from ...core.resources import data_dir
from ..settings import AgentSettings, Sandbox

VERSION_TIMEOUT_S = 60.0


def make_preset(settings: AgentSettings) -> CliPreset:
    """The preset `agent.runner` names, made from the settings; ConfigError in one line if not."""
    found = CLI_PRESETS.load(settings.runner)
    make = getattr(found, "from_settings", None)
    return make(settings) if callable(make) else found()


def program_path(preset: CliPreset) -> str:
    """The preset's executable on PATH; ConfigError in one line when it is not installed, naming
    the npm package that installs it when the preset has one."""
    found = shutil.which(preset.program)
    if found is None:
        package = getattr(preset, "package", None)
        install = f": install it with `npm install -g {package}` (the version tested)" if package else ""
        raise ConfigError(f"agent.runner: {preset.name} runs `{preset.program}`, which is not on PATH{install}")
    return found


def npm_packages() -> list[str]:
    """The npm packages of the built-in presets, at their tested versions (what .ci/run installs)."""
    found = (getattr(CLI_PRESETS.load(name), "package", None) for name in CLI_PRESET.builtins)
    return [package for package in found if package]


def cli_version(preset: CliPreset) -> str:
    """What the CLI prints for its version (first line, run in an empty HOME), and a digest of its
    executable's file, so a CLI without a version flag is still told apart from another build."""
    argv = [program_path(preset), *preset.version_argv()[1:]]
    real = os.path.realpath(argv[0])
    return _version(tuple(argv), real, os.stat(real).st_mtime_ns)


@cache
def _version(argv: tuple[str, ...], real: str, _mtime: int) -> str:
    with tempfile.TemporaryDirectory(prefix="wikiskill-version-") as home:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "TERM": "dumb"}
        try:
            done = subprocess.run(
                argv,
                env=env,
                cwd=home,
                capture_output=True,
                text=True,
                timeout=VERSION_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
            lines = (done.stdout or done.stderr).strip().splitlines() if done.returncode == 0 else []
        except (OSError, subprocess.TimeoutExpired):
            lines = []
    printed = lines[0].strip() if lines else "no version"
    return f"{printed} ({hashlib.sha256(Path(real).read_bytes()).hexdigest()[:12]})"


def placeholder_run(settings: AgentSettings, model: str) -> CliRun:
    """A run whose per-task values are their names in braces: the preset's argv and environment
    for it are its arguments, whatever the task."""
    return CliRun(
        prompt="{prompt}",
        workdir=Path("{workdir}"),
        home=Path("{home}"),
        skills=(),
        model=model,
        api_base="{api_base}",
        api_key="{api_key}",
        max_turns=settings.max_steps,
    )


def preset_fingerprint(settings: AgentSettings, model: str) -> dict[str, object]:
    """The preset's name, arguments, environment names, version, sandbox and code (its module, the
    CLI's prompt and the preset contract; the code that drives every preset is the CLI runner's,
    `roles/runners/cli.py`), for the fingerprint (the wall-time limit is left out, as timeouts are)."""
    preset = make_preset(settings)
    run = placeholder_run(settings, model)
    module = sys.modules[type(preset).__module__]
    sources = [inspect.getsource(module), (data_dir("prompts") / "agent_cli.j2").read_text(encoding="utf-8")]
    sources.append(inspect.getsource(sys.modules[CliRun.__module__]))
    return {
        "preset": preset.name,
        "arguments": preset.argv(run)[1:],
        "environment": sorted(preset.environment(run)),
        "version": cli_version(preset),
        "sandbox": settings.sandbox.value,
        "code": hashlib.sha256("\0".join(sources).encode()).hexdigest()[:24],
    }


def check_cli(settings: AgentSettings) -> None:
    """Refuse in one line, before any task runs, a CLI runner that cannot start: an unknown preset,
    its executable missing, or bubblewrap missing under `sandbox: bwrap`."""
    from .cli_sandbox import require_bwrap

    program_path(make_preset(settings))
    if settings.sandbox is Sandbox.BWRAP:
        require_bwrap()
