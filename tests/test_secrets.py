"""API keys never reach traces, commits, the wiki, logs or error messages, even when the models
echo them back: the scripted world below puts the key into answers, wiki pages, a proposal and
its name, and a provider error; then every git object, ref, working file and line printed is
searched for it, in any letter case."""

import os
import subprocess
from pathlib import Path

import pytest
from conftest import git
from scripted import SPELL, ScriptedWorld, create
from typer.testing import CliRunner

from wikiskill.cli import app
from wikiskill.testing.fakeserver import FakeOpenAIServer
from wikiskill.testing.fakeserver import Reply as ServerReply
from wikiskill.redact import REDACTED, is_secret_name, scrub

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
                "create_patterns": [{"name": "key-echo", "summary": f"the key {SECRET}", "content":
                                     f"# Key echo\n## Description\nThe key is {SECRET}.\n## Root cause\nr\n"
                                     f"## Evidence\nSHOWN-TASK printed {SECRET}.\n## Fix\nf\n"},
                                    {"name": f"page {SECRET.upper()}", "summary": "named after the key",
                                     "content": "## Description\nd\n## Root cause\nr\n## Evidence\nSHOWN-TASK\n## Fix\nf"}],
                "update_patterns": [],
                "append_log": f"Saw the key {SECRET.upper()}.",
            })
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
        outputs = [runner.invoke(app, ["init", str(root), "--benchmark", "example-qa", "--model",
                                       "openai/fake-model", "--api-base", server.base_url])]
        outputs.append(runner.invoke(app, ["-C", str(root), "evolve", "--rounds", "2"]))
        assert outputs[-1].exit_code == 0, outputs[-1].output
        world.broken = True
        outputs.append(runner.invoke(app, ["-C", str(root), "evolve", "--rounds", "1"]))
        assert outputs[-1].exit_code == 1
        assert server.requests[0]  # the key did go to the provider: it was really in use
    return root, [result.output for result in outputs]


def files_under(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in folder.rglob("*")
            if path.is_file() and not path.is_symlink() and not any(part in skip for part in path.parts)}


def test_the_key_is_in_no_git_object_ref_or_working_file(leaked):
    root, _ = leaked
    objects = subprocess.run(["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout
    assert objects.count(b" commit ") >= 10  # "<sha> commit <size>" headers: the dump is real
    assert NEEDLE not in objects.lower()
    assert NEEDLE not in git(root, "log", "--all", "-p").lower().encode()
    assert NEEDLE not in git(root, "for-each-ref").lower().encode()
    for path, data in {**files_under(root, skip=(".git", ".wikiskill")), **files_under(root / ".git", ("objects",))}.items():
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
    from wikiskill.proposals import InvalidProposal, prepare_proposal
    from wikiskill.roles.maintainer import MaintainerOutput, PageCreate
    from wikiskill.wiki import Wiki, apply_maintainer_output

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
