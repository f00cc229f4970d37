"""wikiskill.yaml as read: one-line errors, and role settings that fall back to the top level."""

import pytest

from wikiskill.core.errors import ConfigError
from wikiskill.store.settings import parse_config


def test_config_errors_are_one_line():
    with pytest.raises(ConfigError, match=r"agent.max_steps: Input should be a valid integer"):
        parse_config("benchmark: example-qa\nagent:\n  max_steps: lots\n")
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        parse_config("- a\n- b\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_config("benchmark: [unclosed\n")
    with pytest.raises(ConfigError, match=r"line 2: unknown setting 'modle' \(did you mean 'model'\?\)$"):
        parse_config("benchmark: example-qa\nmodle: typo\n")


def test_role_settings_fall_back_and_overrides_win():
    config = parse_config("benchmark: example-qa\nmodel: openai/a\nproposer:\n  model: anthropic/p\n")
    assert config.role("agent").model == "openai/a" and config.role("proposer").model == "anthropic/p"
    overridden = config.with_overrides(model="ollama/x", api_base=None)
    assert overridden.role("proposer").model == "ollama/x"
    assert config.with_overrides(concurrency=9).role("proposer").model == "anthropic/p"


def test_every_problem_of_a_config_is_reported_at_once_each_with_its_line():
    text = "benchmark: no-such-suite\nconcurrency: zero\ngate:\n  policy: strict\n  repeets: 2\n"
    with pytest.raises(ConfigError) as raised:
        parse_config(text)
    assert [(problem.line, problem.text.split(":")[0]) for problem in raised.value.problems] == [
        (1, "benchmark"),
        (2, "concurrency"),
        (5, "unknown setting 'gate.repeets' (did you mean 'gate.repeats'?)"),
    ]
    message = str(raised.value)
    assert message.startswith("wikiskill.yaml, line 1: benchmark: unknown benchmark 'no-such-suite'")
    assert "; line 2: concurrency: Input should be a valid integer" in message and "\n" not in message
