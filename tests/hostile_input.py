"""Hypothesis strategies for hostile model output: names that escape, front matter that is no
mapping, values of any JSON shape, pages of any text; and the settings their properties run under."""

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

HOSTILE_NAMES = [
    "../../x",
    "../../../outside/secret.txt",
    "/etc/passwd",
    "/tmp/abs",
    "C:\\evil",
    "..",
    ".",
    "",
    " ",
    "-",
    "skills/../../x",
    "wiki/../raw/r001/val.jsonl",
    "name\n---\nname: evil",
    "a\0b",
    ".git/config",
    "index",
    "spell-letters",
    "notadir",
    "dirlink",
    "evil",
    "linked",
    "trap",
    "Ünïcödé ñame",
    "x" * 300,
    "~/.ssh/id_rsa",
    "traces/../../raw",
    "raw/r001/val.jsonl",
    "raw/r001/train/train-00.json",
    "traces/train-00",
    "traces/broken",
    "traces/val-01",
    "raw/test/x.json",
    "wiki/patterns/linked.md",
    "skills/evil/SKILL.md",
    "skills/dirlink/x",
    "wiki/val/x.md",
    "wiki/index.md",
    "skills",
    "wiki",
    "traces",
    "file:///etc/passwd",
    "wiki/index.md\n",
    "wiki/patterns/",
]


FRONT_MATTERS = [
    "- not\n- a mapping",
    "name: evil",
    "[[[[",
    "a: b\n---\nname: evil",
    "!!python/object/apply:os.system [ls]",
    "evidence: [[1], {a: b}, 3]",
    'description: "x\\n---\\nname: evil"',
    "{" * 2000,
    "created: 2024-01-01",
]


text = st.one_of(st.text(max_size=60), st.sampled_from(HOSTILE_NAMES), st.integers(0, 25_000).map(lambda n: "y" * n))


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


page_text = st.one_of(text, st.builds(lambda fm, body: f"---\n{fm}\n---\n{body}", st.sampled_from(FRONT_MATTERS), text))


edit = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {"op": st.sampled_from(["append", "replace", "insert_after", "delete"]), "content": text},
        optional={
            "target": st.sampled_from(["---", "body", "## Instructions", "", "name: spell-letters"]) | text,
            "file": st.sampled_from(["SKILL.md", "PURPOSE.md", "../../x", "/etc/passwd"]) | json_value,
        },
    ),
)


PROPERTY = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
