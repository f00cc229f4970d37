"""Every error a user can make in a jsonl suite is one line on stderr and exit 1, naming the file
and line, refused before any model call."""

import json
import logging
from pathlib import Path

import pytest

from cli_errors import one_error_line, run
from wikiskill.testing.fakeserver import FakeOpenAIServer

ROW = {"id": "t1", "question": "Reverse 'ab'.", "answer": "ba"}


def suite(directory: Path, **splits: str | bytes) -> Path:
    """A jsonl suite with one good task per split, unless a split's text is given."""
    directory.mkdir()
    for split in ("train", "val", "test"):
        text = splits.get(split, json.dumps(ROW) + "\n")
        (directory / f"{split}.jsonl").write_bytes(text if isinstance(text, bytes) else text.encode())
    return directory


@pytest.mark.parametrize(
    ("val", "expected"),
    [
        (
            '{"id": "v1", "question": "q", "answer": "a"}\n{"id": "v2", "question": \n',
            "val.jsonl, line 2: not valid JSON",
        ),
        ('{"id": "v1", "question": "q"}\n', "val.jsonl, line 1: missing 'answer'"),
        ('{"question": "q", "answer": "a"}\n', "val.jsonl, line 1: missing 'id'"),
        (
            '{"id": "v1", "question": "q", "answer": "a"}\n\n{"id": "v1", "question": "r", "answer": "b"}\n',
            "val.jsonl, line 3: duplicate id 'v1' (first on line 1)",
        ),
        ("\n", "val.jsonl: no tasks (the split is empty)"),
        ('["v1", "q", "a"]\n', "val.jsonl, line 1: must be a JSON object"),
        (
            b'{"id": "v1", "question": "q", "answer": "a"}\n{"id": "v2", "question": "caf\xe9", "answer": "a"}\n',
            "val.jsonl, line 2 (byte offset 74): not UTF-8 text (byte 0xe9); it must be saved as UTF-8",
        ),
    ],
)
def test_init_refuses_a_broken_jsonl_suite_naming_file_and_line(tmp_path, val, expected):
    folder = suite(tmp_path / "suite", val=val)
    line = one_error_line(run("init", str(tmp_path / "ws"), "--benchmark", f"jsonl:{folder}", "--model", "openai/x"))
    assert expected in line and str(folder) in line
    assert not (tmp_path / "ws").exists()


def test_a_suite_broken_after_init_is_refused_before_any_model_call(tmp_path):
    folder = suite(tmp_path / "suite")
    with FakeOpenAIServer(lambda body: "<answer>ba</answer>") as server:
        assert (
            run(
                "init",
                str(tmp_path / "ws"),
                "--benchmark",
                f"jsonl:{folder}",
                "--model",
                "openai/x",
                "--api-base",
                server.base_url,
            ).exit_code
            == 0
        )
        (folder / "train.jsonl").write_text(json.dumps(ROW) + "\n" + json.dumps(ROW) + "\n")
        for command in (["evolve", "--rounds", "1"], ["eval", "--split", "val"]):
            line = one_error_line(run("-C", str(tmp_path / "ws"), *command))
            assert "train.jsonl, line 2: duplicate id 't1'" in line
        assert server.requests == []


def test_the_datasets_logger_prints_no_error_lines_of_its_own(tmp_path, capfd):
    from wikiskill.benchmarks.jsonl import JsonlQA

    JsonlQA(suite(tmp_path / "suite")).tasks("val")
    assert logging.getLogger("datasets").getEffectiveLevel() > logging.ERROR
    assert "ERROR" not in capfd.readouterr().err


def test_a_scorer_that_is_not_a_function_is_refused(tmp_path):
    folder = suite(tmp_path / "suite")
    (folder / "suite.json").write_text('{"scorer": "os:sep"}')
    line = one_error_line(run("init", str(tmp_path / "ws"), "--benchmark", f"jsonl:{folder}", "--model", "openai/x"))
    assert "scorer 'os:sep' is not a function" in line
    (folder / "suite.json").write_text("{not json")
    line = one_error_line(run("init", str(tmp_path / "ws"), "--benchmark", f"jsonl:{folder}", "--model", "openai/x"))
    assert "suite.json: not valid JSON" in line
