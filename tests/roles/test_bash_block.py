"""The bash-block protocol: a reply's ```bash blocks are its commands, and a command whose output
starts with the finish marker ends the task with the rest of its output as the answer."""

from wikiskill.roles.bash_block import FINISH_MARKER, bash_blocks, finished


def test_the_commands_are_the_bash_and_sh_blocks_of_a_reply_in_order():
    reply = (
        "First look around.\n```bash\nls -la\n```\nThen:\n```sh\ncat notes.txt | head -n 3\n```\n"
        "```python\nprint('not a command')\n```"
    )
    assert bash_blocks(reply) == ["ls -la", "cat notes.txt | head -n 3"]


def test_a_block_keeps_its_lines_and_windows_line_ends_are_read():
    assert bash_blocks("```bash\r\ncd src\r\nmake test\r\n```") == ["cd src\r\nmake test"]


def test_a_reply_without_a_block_or_without_text_has_no_commands():
    assert bash_blocks("I would run ls here.") == []
    assert bash_blocks("") == bash_blocks(None) == []


def test_output_that_starts_with_the_finish_marker_gives_the_rest_as_the_answer():
    assert finished(f"\n{FINISH_MARKER}\n  the answer is 42  \n") == "the answer is 42"
    assert finished(f"{FINISH_MARKER}") == ""


def test_output_with_the_marker_anywhere_but_its_first_line_does_not_finish():
    assert finished(f"building...\n{FINISH_MARKER}\n42") is None
    assert finished(f"{FINISH_MARKER} and more\n42") is None
