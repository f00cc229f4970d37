"""wikiskill.yaml read from text or from a workspace: the one way every command reads it, so a
key given twice, an unknown setting or a benchmark that no family knows is refused the same way,
in one line. The settings themselves are the models `core.config` assembles, which look nothing up."""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError
from yaml.constructor import SafeConstructor

from ..benchmarks import BenchmarkKind, resolve, spec_of
from ..core.config import CONFIG_FILE, OFFLINE_MODEL, Config, Location, config_problems
from ..core.errors import BenchmarkError, ConfigError, ConfigProblem
from ..core.text import read_utf8
from ..core.yaml_reading import LIBYAML, Reader
from ..roles.settings import Role, runner_class


class _UniqueKeys(SafeConstructor):
    """YAML's safe constructor, except that a key given twice in one mapping is an error, not a silent merge."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[object, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key!r} is set twice (first on line {seen[key].line + 1})", key_node.start_mark
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


class _ExactConfigLoader(_UniqueKeys, yaml.SafeLoader):
    """The pure-Python reader with `_UniqueKeys`."""


if TYPE_CHECKING or LIBYAML:

    class _FastConfigLoader(_UniqueKeys, yaml.CSafeLoader):
        """libyaml's reader with `_UniqueKeys`."""

else:
    _FastConfigLoader = _ExactConfigLoader

_CONFIG_YAML = Reader(_FastConfigLoader, _ExactConfigLoader)


def parse_config(text: str, source: str = CONFIG_FILE) -> Config:
    """The one way a wikiskill.yaml is read: every command refuses the same broken file the same way."""
    try:
        data = _CONFIG_YAML.load(text)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(f"{source}{_yaml_mistake(text, exc)}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: must be a YAML mapping of settings")
    problems: list[ConfigProblem] = []
    config = None
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems += config_problems(exc, lambda loc: line_of(text, loc))
    benchmark = data.get("benchmark")
    if isinstance(benchmark, str):
        try:
            resolve(benchmark, installed=False)
        except BenchmarkError as exc:
            problems.append(ConfigProblem(f"benchmark: {exc}", line_of(text, ("benchmark",))))
    if problems or config is None:
        raise ConfigError.found(source, sorted(problems, key=lambda problem: problem.line or 0))
    check_runner(config, source)
    return config


UNCLOSED = ("quoted scalar", "flow sequence", "flow mapping", "simple key")
"""What YAML names as an error's context when it began a construct it found no end for: the mistake
is where it began (its context mark), not where YAML gave up, which can be lines later."""


def _yaml_mistake(text: str, exc: yaml.MarkedYAMLError) -> str:
    """`, line N: not valid YAML (...)` naming the line the mistake is on: where a construct left
    open began, else where YAML noticed the problem."""
    problem, noticed = exc.problem or "unreadable", exc.problem_mark
    if noticed is None:
        return f": not valid YAML ({problem})"
    began, later = exc.context_mark, f"line {noticed.line + 1}"
    if began is not None and began.line != noticed.line and any(what in (exc.context or "") for what in UNCLOSED):
        return f", line {began.line + 1}: not valid YAML ({exc.context}: {problem} on {later})"
    quote = _quote_ending_at(text, noticed.line)
    if quote is not None:
        return f", line {quote.line + 1}: not valid YAML (the quote opened here closes only on {later}: {problem})"
    return f", {later}: not valid YAML ({problem})"


def _quote_ending_at(text: str, line: int) -> yaml.Mark | None:
    """The start of a quoted value that spans lines and ends on `line`: a quote left open that a
    later value's quote closed, the usual cause of an error reported on that line."""
    found = None
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if token.start_mark.line > line:
                break
            if (
                isinstance(token, yaml.ScalarToken)
                and token.style in ('"', "'")
                and token.start_mark.line < token.end_mark.line == line
            ):
                found = token.start_mark
    except yaml.YAMLError:
        pass
    return found


def line_of(text: str, loc: Location) -> int | None:
    """The line (from 1) of the setting at `loc` in the YAML `text`: of its key, or of its list
    item; of the deepest part of `loc` the text has, None when it has none or does not parse."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(
                (
                    (key, value)
                    for key, value in node.value
                    if isinstance(key, yaml.ScalarNode) and key.value == str(part)
                ),
                None,
            )
            if pair is None:
                break
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def check_runner(config: Config, source: str) -> None:
    """The runner plays the suite (its `check_suite`: a runner other than `builtin` answers questions
    or works in a task's folder, a reference agent checks a suite of containers, the built-in agent
    on task folders needs a model), and `agent.kind` is set only for a runner that reads it; each
    refused in one line naming `source`, where `agent.runner` came from."""
    runner = runner_class(config.agent.runner)
    if config.agent.kind is not None and "kind" not in runner.own_settings(config.agent.runner):
        raise ConfigError(
            f"{source}: agent.kind: {config.agent.kind} is the builtin runner's agent, not {config.agent.runner}'s"
        )
    runner.check_suite(config, spec_of(config.benchmark), source)


def a_kind(kind: BenchmarkKind) -> str:
    """A kind of suite with its article, as a message names it: `a qa`, `an interactive`."""
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def check_judge(config: Config, source: str) -> None:
    """A suite scored by a judge needs an LLM as the judge (`judge.model`, else the top-level `model`)."""
    if spec_of(config.benchmark).judged and config.role(Role.JUDGE).model == OFFLINE_MODEL:
        raise ConfigError(
            f"{source}: {config.benchmark} is scored by an LLM judge and has no judge model: "
            "set judge.model (or the top-level model, e.g. --model openai/gpt-4o-mini)"
        )


def load_config(root: Path) -> Config:
    path = root / CONFIG_FILE
    try:
        text = read_utf8(path, ConfigError)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path} is missing") from exc
    return parse_config(text, str(path))


def with_locked(text: str, names: list[str]) -> str:
    """wikiskill.yaml's `text` with `skills.locked` set to `names`, every other line (comments
    included) kept; the result is read back like any wikiskill.yaml."""
    value = "[" + ", ".join(json.dumps(name) for name in names) + "]"
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    skills = _entry(root, "skills")
    if skills is None:
        changed = f"{text.rstrip()}\n\nskills:\n  locked: {value}\n"
    elif isinstance(skills[1], yaml.MappingNode) and skills[1].flow_style is False and skills[1].value:
        locked = _entry(skills[1], "locked")
        if locked is not None:
            start, end = locked[1].start_mark.index, locked[1].end_mark.index
            changed = text[:start] + value + text[end:]
        else:
            first = skills[1].value[0][0].start_mark
            line_end = text.find("\n", skills[0].end_mark.index) + 1 or len(text)
            changed = text[:line_end] + " " * first.column + f"locked: {value}\n" + text[line_end:]
    else:
        raise ConfigError(f"{CONFIG_FILE}: skills: is not a block of settings; set skills.locked by hand")
    parse_config(changed)
    return changed


def _entry(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next(
        ((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key),
        None,
    )
