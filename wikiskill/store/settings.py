"""wikiskill.yaml read from text or from a workspace: the one way every command reads it, so a
key given twice, an unknown setting or a benchmark that no family knows is refused the same way,
in one line. The settings themselves are `core.config`'s models, which look nothing up."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from ..benchmarks import BenchmarkKind, resolve, spec_of
from ..benchmarks.harbor import HARBOR
from ..benchmarks.registry import split_name
from ..core.config import CONFIG_FILE, OFFLINE_MODEL, Config, Role, config_error
from ..core.errors import BenchmarkError, ConfigError


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a key given twice in one mapping is an error, not a silent merge."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[object, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key!r} is set twice (first on line {seen[key].line + 1})", key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def parse_config(text: str, source: str = CONFIG_FILE) -> Config:
    """The one way a wikiskill.yaml is read: every command refuses the same broken file the same way."""
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        where = f", line {exc.problem_mark.line + 1}" if exc.problem_mark else ""
        raise ConfigError(f"{source}{where}: not valid YAML ({exc.problem})") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: must be a YAML mapping of settings")
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, source) from exc
    try:
        resolve(config.benchmark, installed=False)
    except BenchmarkError as exc:
        raise ConfigError(f"{source}: benchmark: {exc}") from exc
    check_runner(config, source)
    return config


def check_runner(config: Config, source: str) -> None:
    """A runner other than `builtin` answers questions or works in a task's folder: an interactive
    or tool-use suite needs an agent that speaks its protocol, so that mismatch is refused in one line."""
    if config.agent.builtin:
        return
    if config.agent.reference and split_name(config.benchmark)[0] != HARBOR.family:
        raise ConfigError(f"{source}: agent.runner: {config.agent.runner} checks Harbor suites (harbor:PATH) "
                          f"against their solutions; {config.benchmark} is not one")
    kind = spec_of(config.benchmark).kind
    if kind not in (BenchmarkKind.QA, BenchmarkKind.WORKDIR):
        article = "an" if kind[0] in "aeiou" else "a"
        raise ConfigError(f"{source}: agent.runner: {config.agent.runner} plays QA suites and task folders only; "
                          f"{config.benchmark} is {article} {kind} suite (use runner: builtin)")


def check_judge(config: Config, source: str) -> None:
    """A suite scored by a judge needs an LLM as the judge (`judge.model`, else the top-level `model`)."""
    if spec_of(config.benchmark).judged and config.role(Role.JUDGE).model == OFFLINE_MODEL:
        raise ConfigError(f"{source}: {config.benchmark} is scored by an LLM judge and has no judge model: "
                          "set judge.model (or the top-level model, e.g. --model openai/gpt-4o-mini)")


def load_config(root: Path) -> Config:
    path = root / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"{path} is missing") from exc
    return parse_config(text, str(path))
