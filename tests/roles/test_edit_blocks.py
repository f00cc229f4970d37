"""The parser of file edits written in a reply's text (Aider's `whole` and `diff` formats), held
to hostile model output: any text parses without an error, what it finds round-trips, and no path
it accepts leaves the working directory."""

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikiskill.roles.edit_blocks import (
    EditRefused,
    SearchReplace,
    WholeFile,
    clean_path,
    replaced,
    search_replaces,
    whole_files,
)

FENCE_PIECES = ["```", "```python", "```bash", "~~~", "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "\n", "x.py"]
hostile = st.lists(st.one_of(st.text(max_size=30), st.sampled_from(FENCE_PIECES)), max_size=30).map("\n".join)
line = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40).filter(
    lambda text: not text.lstrip().startswith(("```", "~~~", "<<<<<", "=====", ">>>>>"))
)
body = st.lists(line, max_size=12).map(lambda lines: "".join(f"{text}\n" for text in lines))
PATH_PIECES = ["..", ".", "a", "/", "~", "\\", "b.py"]
file_name = st.from_regex(r"[a-z][a-z0-9_]{0,8}(/[a-z][a-z0-9_]{0,8}){0,2}\.(py|txt|md)", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(hostile)
def test_any_text_parses_without_an_error(text):
    for found in whole_files(text):
        assert isinstance(found, WholeFile)
    for found in search_replaces(text):
        assert isinstance(found, SearchReplace)


@settings(max_examples=100, deadline=None)
@given(file_name, body, st.sampled_from(["", "Here it is:\n", "Some prose.\n\n"]))
def test_a_whole_file_block_round_trips_with_the_name_on_the_line_before(name, content, prose):
    text = f"{prose}{name}\n```python\n{content}```\nThat is all."
    assert whole_files(text) == [WholeFile(name, content)]


@settings(max_examples=100, deadline=None)
@given(file_name, body.filter(str.strip), body)
def test_a_search_replace_block_round_trips_fenced_or_not(name, search, replace):
    block = f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"
    assert search_replaces(f"{name}\n{block}") == [SearchReplace(name, search, replace)]
    assert search_replaces(f"{name}\n```python\n{block}```\n") == [SearchReplace(name, search, replace)]
    assert whole_files(f"{name}\n```python\n{block}```\n") == []  # a diff is no whole file


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(PATH_PIECES)).map("".join)))
def test_a_path_is_refused_or_stays_inside_the_working_directory(raw):
    try:
        path = clean_path(raw)
    except EditRefused:
        return
    assert path and not path.startswith(("/", "~")) and ".." not in path.split("/")
    assert posixpath.normpath(path) == path


@settings(max_examples=100, deadline=None)
@given(body, body, body)
def test_replacing_finds_the_search_text_or_refuses(original, search, replace):
    try:
        result = replaced(original, search, replace)
    except EditRefused:
        twice = search in original and original.find(search, original.find(search) + 1) >= 0
        assert search.strip() and (search not in original or twice) or not search.strip() and original.strip()
        return
    if search.strip() and search in original:
        assert result == original.replace(search, replace, 1)


@pytest.mark.parametrize(
    "text",
    [
        "solution.py\n```python\ndef f():\n    return 1\n",  # cut short: never closed
        "```bash\ncat solution.py\n```",
        '```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```',
    ],
)
def test_an_unclosed_fence_a_command_or_a_tool_call_is_no_file(text):
    assert whole_files(text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("**solution.py**\n```python\nx = 1\n```", "solution.py"),
        ("Here is the new `solution.py`:\n```python\nx = 1\n```", "solution.py"),
        ("```python src/solution.py\nx = 1\n```", "src/solution.py"),
        ("# File: solution.py\n```\nx = 1\n```", "solution.py"),
        ("Here is the code:\n```python\nx = 1\n```", None),
    ],
)
def test_the_file_is_named_as_models_write_it(text, name):
    assert whole_files(text) == [WholeFile(name, "x = 1\n")]


@pytest.mark.parametrize("raw", ["/etc/passwd", "../outside.py", "a/../../b.py", "~/.bashrc", "C:/x.py", "a\0b"])
def test_paths_out_of_the_working_directory_are_refused(raw):
    with pytest.raises(EditRefused):
        clean_path(raw)


def test_a_search_that_differs_only_in_trailing_spaces_still_matches():
    assert replaced("def f():  \n    return 1\n", "def f():\n    return 1\n", "def f():\n    return 2\n") == (
        "def f():\n    return 2\n"
    )


@pytest.mark.parametrize(
    "original",
    ["x = 1\ny = 2\nx = 1\n", "x = 1  \ny = 2\nx = 1 \n"],
    ids=["exactly", "up-to-trailing-spaces"],
)
def test_a_search_found_in_more_than_one_place_is_refused_as_ambiguous(original):
    with pytest.raises(EditRefused, match="in the file more than once: add the lines around it"):
        replaced(original, "x = 1\n", "x = 3\n")


def test_a_search_found_twice_overlapping_is_ambiguous_and_one_exact_copy_wins_over_a_spaced_one():
    with pytest.raises(EditRefused, match="more than once"):
        replaced("aaa\n", "aa", "b")
    assert replaced("x = 1  \ny = 2\nx = 1\n", "x = 1\n", "x = 3\n") == "x = 1  \ny = 2\nx = 3\n"
