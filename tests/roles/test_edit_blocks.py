"""The parser of file edits written in a reply's text (Aider's `whole` and `diff` formats), held
to hostile model output: any text parses without an error, what it finds round-trips, and no path
it accepts leaves the working directory."""

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikiskill.roles.edit_blocks import (
    MAX_PATH_CHARS,
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


def test_a_file_block_after_a_command_block_is_still_found():
    text = "First look:\n```bash\nls\n```\nThen:\nx.py\n```python\nx = 1\n```"
    assert whole_files(text) == [WholeFile("x.py", "x = 1\n")]


def test_adjacent_fences_are_two_blocks():
    text = "```python a.py\nx = 1\n```\n```python b.py\ny = 2\n```"
    assert whole_files(text) == [WholeFile("a.py", "x = 1\n"), WholeFile("b.py", "y = 2\n")]


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_a_search_replace_block_without_a_file_takes_the_file_of_the_block_before_it():
    text = (
        block("s0\n", "r0\n")
        + "a.py\n"
        + block("s1\n", "r1\n")
        + "b.py\n"
        + block("s2\n", "r2\n")
        + "c.py\n\n"
        + block("s3\n", "r3\n")
        + block("s4\n", "r4\n")
        + "That is all for `d.py`."
    )
    assert search_replaces(text) == [
        SearchReplace(None, "s0\n", "r0\n"),
        SearchReplace("a.py", "s1\n", "r1\n"),
        SearchReplace("b.py", "s2\n", "r2\n"),
        SearchReplace("c.py", "s3\n", "r3\n"),
        SearchReplace("c.py", "s4\n", "r4\n"),
    ]


def test_a_block_cut_short_by_another_search_or_without_its_divider_is_no_block():
    cut = "x.py\n<<<<<<< SEARCH\n" + block("old\n", "new\n")
    assert search_replaces(cut) == [SearchReplace(None, "old\n", "new\n")]
    assert search_replaces("x.py\n<<<<<<< SEARCH\nold\n>>>>>>> REPLACE\n") == []


def test_an_empty_search_section_is_a_block_that_fills_a_file():
    assert search_replaces("x.py\n" + block("", "new\n")) == [SearchReplace("x.py", "", "new\n")]


@pytest.mark.parametrize(
    ("fence", "name"),
    [("```python src/a.py", "src/a.py"), ("```a.py", "a.py"), ("```", "x.py"), ("```python", "x.py")],
)
def test_a_search_replace_block_takes_its_file_from_its_fence_or_the_line_before_it(fence, name):
    text = f"x.py\n{fence}\n" + block("old\n", "new\n") + "```\n"
    assert search_replaces(text) == [SearchReplace(name, "old\n", "new\n")]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("```solution.py\nx = 1\n```", "solution.py"),
        ("file: solution.py\n```python\nx = 1\n```", "solution.py"),
        ("File: `Xform.py`\n```python\nx = 1\n```", "Xform.py"),
        ("**Xform.py**\n```python\nx = 1\n```", "Xform.py"),
        ("X.py\n```python\nx = 1\n```", "X.py"),
        ("src/Makefile\n```\nx = 1\n```", "src/Makefile"),
        ("e.g.\n```python\nx = 1\n```", None),
        ("i.e.,\n```python\nx = 1\n```", None),
    ],
)
def test_a_file_name_is_told_from_the_words_around_it(text, name):
    assert whole_files(text) == [WholeFile(name, "x = 1\n")]


def test_a_path_with_backslashes_is_read_with_slashes():
    assert clean_path("src\\calc.py") == "src/calc.py"


def test_a_blank_or_too_long_path_is_refused_naming_its_first_80_characters():
    with pytest.raises(EditRefused, match="^'  ' is not a file name in the working directory$"):
        clean_path("  ")
    assert clean_path("a" * MAX_PATH_CHARS) == "a" * MAX_PATH_CHARS
    with pytest.raises(EditRefused) as refused:
        clean_path("a" * (MAX_PATH_CHARS + 1))
    assert str(refused.value) == f"{'a' * 80!r} is not a file name in the working directory"


def test_a_lower_case_drive_letter_is_outside_the_working_directory():
    with pytest.raises(EditRefused, match="outside the working directory"):
        clean_path("c:/x.py")


def test_an_empty_search_on_a_file_with_text_or_a_missing_search_is_refused_saying_why():
    with pytest.raises(EditRefused, match="^an empty SEARCH section only fills an empty or new file$"):
        replaced("x = 1\n", "\n", "x = 2\n")
    missing = "^the SEARCH section is not in the file: copy the lines exactly as the file has them$"
    with pytest.raises(EditRefused, match=missing):
        replaced("x = 1\n", "y = 1\n", "x = 2\n")


def test_a_search_matched_up_to_trailing_spaces_keeps_the_lines_around_it_and_the_file_s_last_newline():
    original = "a\nb\nx = 1  \nc\nd\n"
    assert replaced(original, "x = 1\n", "y = MAX  \n") == "a\nb\ny = MAX  \nc\nd\n"
    assert replaced("a\nx = 1  ", "x = 1\n", "x = 2\n") == "a\nx = 2"
    assert replaced("a\nx = 1  \n", "x = 1\n", "y = MAX\n") == "a\ny = MAX\n"
