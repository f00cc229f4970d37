"""API keys never reach traces, commits, the wiki, logs or error messages, even when the models
echo them back: the scripted world below puts the key into answers, wiki pages, a proposal and
its name, and a provider error; then every git object, ref, working file and line printed is
searched for it, in any letter case."""

import json
import os
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import git
from scripted import SPELL, ScriptedWorld, create
from transcripts import SESSIONS
from wikiskill.cli import app
from wikiskill.core.redact import MIN_SECRET_CHARS, REDACTED, is_credential, is_secret_name, scrub
from wikiskill.testing.fakeserver import FakeOpenAIServer
from wikiskill.testing.fakeserver import Reply as ServerReply

SECRET = "sk-test-SECRET123456"
NEEDLE = SECRET.lower().encode()


class LeakyWorld(ScriptedWorld):
    """Models that repeat the key everywhere they can; `broken` makes every request fail with it."""

    def __init__(self):
        leak = create("spell-letters", SPELL)
        leak["skill_md"] = leak["skill_md"].replace("before answering.", f"before answering with {SECRET}.")
        leak["purpose_md"] += f"\nKey: {SECRET}\n"
        leak["rationale"] = f"use the key {SECRET}"
        super().__init__(
            proposals={1: leak, 2: {**create("useless", "USELESS"), "name": f"Leak {SECRET}"}},
            maintainer_reply={
                "create_patterns": [
                    {
                        "name": "key-echo",
                        "summary": f"the key {SECRET}",
                        "content": f"# Key echo\n## Description\nThe key is {SECRET}.\n## Root cause\nr\n"
                        f"## Evidence\nSHOWN-TASK printed {SECRET}.\n## Fix\nf\n",
                    },
                    {
                        "name": f"page {SECRET.upper()}",
                        "summary": "named after the key",
                        "content": "## Description\nd\n## Root cause\nr\n## Evidence\nSHOWN-TASK\n## Fix\nf",
                    },
                ],
                "update_patterns": [],
                "append_log": f"Saw the key {SECRET.upper()}.",
            },
        )
        self.broken = False

    def __call__(self, body):
        if self.broken:
            return ServerReply(status=400, content=f"invalid request for key {SECRET}")
        return super().__call__(body)

    def answer(self, system, question):
        return f"My key is {SECRET}. " + super().answer(system, question)


@pytest.fixture(scope="module")
def leaked(tmp_path_factory):
    """A workspace after two rounds with leaky models and a failed third; the CLI's output."""
    runner = CliRunner()
    root = tmp_path_factory.mktemp("secrets") / "ws"
    world = LeakyWorld()
    with pytest.MonkeyPatch.context() as env, FakeOpenAIServer(world) as server:
        env.setenv("OPENAI_API_KEY", SECRET)
        outputs = [
            runner.invoke(
                app,
                [
                    "init",
                    str(root),
                    "--benchmark",
                    "example-qa",
                    "--model",
                    "openai/fake-model",
                    "--api-base",
                    server.base_url,
                ],
            )
        ]
        outputs.append(runner.invoke(app, ["-C", str(root), "evolve", "--rounds", "2"]))
        assert outputs[-1].exit_code == 0, outputs[-1].output
        world.broken = True
        outputs.append(runner.invoke(app, ["-C", str(root), "evolve", "--rounds", "1"]))
        assert outputs[-1].exit_code == 1
        assert server.requests[0]  # the key did go to the provider: it was really in use
    return root, [result.output for result in outputs]


def files_under(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {
        str(path): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink() and not any(part in skip for part in path.parts)
    }


def test_the_key_is_in_no_git_object_ref_or_working_file(leaked):
    root, _ = leaked
    objects = subprocess.run(
        ["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"], capture_output=True, check=True
    ).stdout
    assert objects.count(b" commit ") >= 10  # "<sha> commit <size>" headers: the dump is real
    assert NEEDLE not in objects.lower()
    assert NEEDLE not in git(root, "log", "--all", "-p").lower().encode()
    assert NEEDLE not in git(root, "for-each-ref").lower().encode()
    for path, data in {
        **files_under(root, skip=(".git", ".wikiskill")),
        **files_under(root / ".git", ("objects",)),
    }.items():
        assert NEEDLE not in data.lower(), path


def test_the_key_is_replaced_where_the_replies_arrive(leaked):
    root, _ = leaked
    assert REDACTED in (root / "wiki/patterns/key-echo.md").read_text()
    assert REDACTED in (root / "skills/spell-letters/SKILL.md").read_text()
    assert REDACTED in git(root, "show", "main~2:raw/r002/train/train-00.json")
    # names built from the key arrive already redacted, so they name the placeholder, not the key
    assert (root / "wiki/patterns/page-redacted.md").is_file()
    assert "## r002 · create · leak-redacted · REJECTED" in (root / "wiki/skill-impact.md").read_text()


def test_names_carrying_the_key_are_refused_when_a_role_bypasses_the_model_layer(monkeypatch):
    """Defence in depth for roles whose replies do not come through llm.py (host-supplied models)."""
    from wikiskill.knowledge.proposals import InvalidProposal, prepare_proposal
    from wikiskill.knowledge.wiki import Wiki, apply_maintainer_output
    from wikiskill.knowledge.wiki_requests import MaintainerOutput, PageCreate

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with pytest.raises(InvalidProposal, match="the skill name contains a secret"):
        prepare_proposal({**create("x", SPELL), "name": f"leak {SECRET}"}, {}, 1)
    output = MaintainerOutput(create_patterns=[PageCreate(name=f"page {SECRET}", content="c")], append_log="log")
    update = apply_maintainer_output(output, Wiki(pages={}), 1, [])
    assert update.refused == ["create '[REDACTED]': the page name contains a secret"]
    assert not any(path.startswith("wiki/patterns/") for path in update.changes)


def test_the_key_is_in_no_output_or_error_message(leaked):
    _, outputs = leaked
    assert outputs[-1].strip().splitlines()[-1].startswith("error: agent model openai/fake-model: BadRequestError")
    for output in outputs:
        assert SECRET.lower() not in output.lower()


def test_the_key_is_in_no_local_cache(leaked):
    root, _ = leaked
    cached = files_under(root / ".wikiskill")
    results = [data for path, data in cached.items() if Path(path).parent.parent.name == "results"]
    assert len(results) >= 4  # the rounds' finished trajectories, each holding the agent's echo of the key
    assert all(f"My key is {REDACTED}".encode() in data for data in results)
    for path, data in cached.items():
        assert NEEDLE not in data.lower(), path


def test_secret_names_and_case_insensitive_scrubbing(monkeypatch):
    for name in ("OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "SERPAPI_APIKEY", "db_password"):
        assert is_secret_name(name), name
    for name in ("TOKENIZERS_PARALLELISM", "KEYBOARD", "PATH", "HOME"):
        assert not is_secret_name(name), name
    monkeypatch.setenv("MY_TOKEN", "Abc-Def-123456")
    monkeypatch.setenv("SHORT_KEY", "abc")  # too short to be told from ordinary text
    assert scrub("x abc-def-123456 ABC-DEF-123456 abc y") == f"x {REDACTED} {REDACTED} abc y"
    assert os.environ["MY_TOKEN"] == "Abc-Def-123456"


# -- secrets written with JSON escapes ---------------------------------------------------------------

PASSWORD = 'hunter"2\\swordfish'  # a `"` and a `\`: inside any JSON text it is always escaped
SLASHED_KEY = "inv/live/9f8e7d6c5b4a3928"


def json_strings(value) -> list[str]:
    """Every string of a decoded JSON value, keys too, and the strings of JSON held in strings."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except ValueError:
            return [value]
        return [value, *json_strings(inner)] if isinstance(inner, (dict, list)) else [value]
    if isinstance(value, list):
        return [text for item in value for text in json_strings(item)]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key, *json_strings(item)]]
    return []


def leaks(text: str, secret: str) -> bool:
    """Whether `text` holds `secret` as written or, once its JSON (or JSON Lines) is decoded."""
    try:
        documents = [json.loads(text)]
    except ValueError:
        documents = [json.loads(line) for line in text.split("\n") if line.strip()]
    return secret.lower() in text.lower() or any(
        secret.lower() in string.lower() for document in documents for string in json_strings(document)
    )


def test_a_session_hiding_secrets_in_json_escapes_is_ingested_without_them(tmp_path, monkeypatch):
    from inprocess import scripted_workspace
    from wikiskill import api
    from wikiskill.store.workspace import MAIN

    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    monkeypatch.setenv("INVOICE_API_KEY", SLASHED_KEY)
    claude = tmp_path / "claude.jsonl"  # the key written `\/` and `\u0069`, as JSON allows
    claude.write_text(
        (SESSIONS / "7c0e4a52-91d3-4b7e-a6f4-2f3c9d8e1b60.jsonl")
        .read_text()
        .replace("inv-live-9f8e7d6c5b4a39281706", "\\u0069nv\\/live\\/9f8e7d6c5b4a3928")
    )
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {"role": "user", "content": "Connect to the database."},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "connect", "arguments": json.dumps({"password": PASSWORD})},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": f"login failed for password {PASSWORD}"},
                {"role": "assistant", "content": "The password was refused."},
            ]
        )
    )
    assert SLASHED_KEY not in claude.read_text() and PASSWORD not in chat.read_text()
    ws = scripted_workspace(tmp_path / "ws")
    added = [*api.ingest(ws, [claude], "claude-code").added, *api.ingest(ws, [chat], "openai-messages").added]
    files = ws.read_files(MAIN, "raw/r001/ingested")
    assert len(added) == len(files) == 2
    for text in [*files.values(), *(trajectory.to_json() for trajectory in added)]:
        assert REDACTED in text
        assert not leaks(text, PASSWORD) and not leaks(text, SLASHED_KEY)
    objects = subprocess.run(
        ["git", "-C", str(ws.root), "cat-file", "--batch-all-objects", "--batch"], capture_output=True, check=True
    ).stdout.lower()
    for secret in (PASSWORD, SLASHED_KEY):
        for written in {secret, json.dumps(secret)[1:-1], json.dumps(json.dumps(secret))[1:-1]}:
            assert written.lower().encode() not in objects, written


def test_a_trace_echoing_a_password_with_a_quote_is_committed_without_it(tmp_path, monkeypatch):
    """pydantic writes the `"` as `\\"`, so the trace's file never holds the password as typed."""
    from inprocess import scripted_workspace
    from wikiskill.store.traces import Trajectory
    from wikiskill.store.workspace import MAIN

    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    ws = scripted_workspace(tmp_path / "ws")
    trace = Trajectory(
        task_id="t1", split="train", kind="qa", question="What is the password?", prediction=f"It is {PASSWORD}."
    )
    assert PASSWORD not in trace.to_json() and leaks(trace.to_json(), PASSWORD)
    ws.commit({"raw/r001/train/t1.json": trace.to_json()}, "r001 rollout\n")
    committed = git(ws.root, "show", f"{MAIN}:raw/r001/train/t1.json")
    assert not leaks(committed, PASSWORD)
    assert Trajectory.model_validate_json(committed).prediction == f"It is {REDACTED}."


def test_json_is_scrubbed_in_its_decoded_strings_and_left_byte_for_byte_when_it_hides_nothing(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    lines = '{"k": "\\u0073k-test-SECRET123456"}\n{"k": "plain\\n"}\n'
    assert scrub(lines) == f'{{"k": "{REDACTED}"}}\n{{"k": "plain\\n"}}\n'

    def tool_call(password: str) -> str:  # JSON held in a JSON string, laid out with an indent
        return json.dumps([{"arguments": json.dumps({"password": password})}], indent=1) + "\n"

    assert scrub(tool_call(PASSWORD)) == tool_call(REDACTED)
    assert scrub(json.dumps({PASSWORD: 1})) == json.dumps({REDACTED: 1})
    for untouched in [
        '{\n  "a": "line\\nbreak",  "n": NaN}\n',
        "[link](x) \\ not json",
        '{"a": "\\u00e9"}',
        '{"broken": "\\u0073k-test-SECRET1',
        "[" * 5000 + "\\",
    ]:
        assert scrub(untouched) == untouched


secret_chars = st.text(
    st.sampled_from(string.ascii_letters + string.digits + string.punctuation + " é😀中"),
    min_size=MIN_SECRET_CHARS // 2,
    max_size=8,
)
secret_text = st.builds(
    lambda head, escaped, tail: head + escaped + tail,
    secret_chars,
    st.sampled_from('"\\/é😀中'),
    secret_chars,
).filter(lambda text: text == text.strip())


@settings(max_examples=80, deadline=None)
@given(
    secret=secret_text,
    before=st.text(max_size=4),
    depth=st.integers(0, 2),
    ascii_only=st.booleans(),
    json_lines=st.booleans(),
)
def test_a_secret_in_json_is_scrubbed_however_deep_and_however_escaped(secret, before, depth, ascii_only, json_lines):
    """Nested as tool-call arguments are, dumped with or without `ensure_ascii` (the cache's
    json.dumps escapes every non-ASCII character), as a document or a line of JSON Lines."""
    assume(is_credential(secret))
    text = json.dumps({"content": f"{before} {secret} tail", "n": 1}, ensure_ascii=ascii_only)
    for _ in range(depth):
        text = json.dumps({"arguments": text}, ensure_ascii=ascii_only)
    assume(secret.lower() not in text.lower())  # only written with escapes: matching the raw text misses it
    if json_lines:
        text = f'{{"before": "a\\nb"}}\n{text}\n'
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HYPOTHESIS_TOKEN", secret)
        clean = scrub(text)
    assert not leaks(clean, secret) and REDACTED in clean


def test_values_shorter_than_the_minimum_are_never_scrubbed_and_the_docs_say_so(monkeypatch):
    short, long = "x1" * (MIN_SECRET_CHARS // 2) + "x", "y1" * (MIN_SECRET_CHARS // 2)
    short = short[: MIN_SECRET_CHARS - 1]
    monkeypatch.setenv("SHORT_TOKEN", short)
    monkeypatch.setenv("LONG_TOKEN", long)
    assert scrub(f"{short} {long}") == f"{short} {REDACTED}"
    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "concepts.md").read_text().split())
    assert f"values shorter than {MIN_SECRET_CHARS} characters are not scrubbed" in docs.lower()


def test_a_trace_holding_the_placeholder_key_as_a_word_is_committed_as_written(tmp_path, monkeypatch):
    """Local-server docs say `OPENAI_API_KEY=anything`: the word is no credential, and a trace is
    evidence, so every "anything" in it stays."""
    from inprocess import scripted_workspace
    from wikiskill.store.traces import Trajectory
    from wikiskill.store.workspace import MAIN

    monkeypatch.setenv("OPENAI_API_KEY", "anything")
    said = "Doing it again will not change anything, and no file has been changed yet. Anything else?"
    ws = scripted_workspace(tmp_path / "ws")
    trace = Trajectory(task_id="t1", split="train", kind="qa", question="Again?", prediction=said)
    ws.commit({"raw/r001/train/t1.json": trace.to_json()}, "r001 rollout\n")
    assert Trajectory.model_validate_json(git(ws.root, "show", f"{MAIN}:raw/r001/train/t1.json")).prediction == said


@pytest.mark.parametrize("value", ["anything", "ANYTHING", "Anything", "sk-no-key-required", "not-needed", "lm-studio"])
def test_words_and_placeholders_are_no_credentials_and_are_never_scrubbed(monkeypatch, value):
    monkeypatch.setenv("OPENAI_API_KEY", value)
    assert not is_credential(value)
    text = f"set it to {value}: {value.upper()} {value.lower()}"
    assert scrub(text) == text


def test_a_credential_is_scrubbed_only_where_it_is_a_whole_token_and_the_docs_say_the_rule(monkeypatch):
    for value in ("sk-test-SECRET123456", "hf_AbCdEfGhIj", 'hunter"2\\swordfish', "inv/live/9f8e7d6c"):
        assert is_credential(value), value
    monkeypatch.setenv("MY_TOKEN", "Abc-Def-123456")
    text = "x Abc-Def-123456, (abc-def-123456) xAbc-Def-123456 Abc-Def-1234567 y"
    assert scrub(text) == f"x {REDACTED}, ({REDACTED}) xAbc-Def-123456 Abc-Def-1234567 y"
    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "concepts.md").read_text().split())
    assert "only a value that can be a credential is scrubbed" in docs.lower()
