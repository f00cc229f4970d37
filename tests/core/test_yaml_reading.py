"""YAML read through libyaml: every document PyYAML's pure-Python reader reads, libyaml reads into
the same values; one libyaml refuses gets the pure-Python reader's own error, worded and placed as
on a machine without libyaml. (libyaml also reads a few the pure-Python reader refuses, such as a
tab after a scalar.)"""

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wikiskill.core.yaml_reading import LIBYAML, SAFE

pytestmark = pytest.mark.skipif(not LIBYAML, reason="this PyYAML has no libyaml, so there is one reader only")

PIECES = [
    *("a", "b: 1", "- x", "  ", "\n", ":", "[", "]", "{", "}", ",", '"', "'", "#", "&x", "*x", "!!str", "\t"),
    *("é", "\ud800", "\x85", "0x1F", "~", "2026-12-05", "|", ">", "?", "---", "..."),
]
"""YAML's structure characters and scalars (a lone surrogate and NEL among them, which a model's
JSON can carry into a skill's front matter), for documents both readers must agree on."""


def with_loader(text: str, loader: type) -> tuple[str, object]:
    try:
        return "value", yaml.load(text, Loader=loader)  # noqa: S506
    except (yaml.YAMLError, UnicodeEncodeError) as exc:  # libyaml's, for a lone surrogate
        return "error", str(exc)


def read(text: str) -> tuple[str, object]:
    try:
        return "value", SAFE.load(text)
    except yaml.YAMLError as exc:
        return "error", str(exc)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_any_document_reads_as_libyaml_reads_it_and_fails_as_the_pure_python_reader_fails(text):
    fast, exact = with_loader(text, yaml.CSafeLoader), with_loader(text, yaml.SafeLoader)
    if exact[0] == "value":
        assert fast == exact
    assert read(text) == (fast if fast[0] == "value" else exact)


def test_a_broken_document_raises_the_pure_python_readers_error():
    text = "skills:\n  locked: [a, b\nmodel: x\n"
    with pytest.raises(yaml.YAMLError) as fast:
        yaml.load(text, Loader=yaml.CSafeLoader)  # noqa: S506
    exact = with_loader(text, yaml.SafeLoader)
    assert read(text) == exact != ("error", str(fast.value))  # libyaml words it otherwise
