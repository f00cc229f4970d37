"""A symbolic link a person committed under wiki/ or skills/ is never read, rewritten or followed
by a step, never shown to a role, and `lint` names it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git
from scripted import MAINTAINER_REPLY, SPELL, ScriptedWorld, create
from wikiskill import api
from wikiskill.loop.harness import Harness
from wikiskill.store.trailers import Step, Trailers
from wikiskill.store.workspace import MAIN
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

LINK = "wiki/patterns/evil-link.md"
SECRET = "OUTSIDE-SECRET-TEXT"


class ReadsTheLink(ScriptedWorld):
    """The scripted world whose proposer first asks for the symlinked page, then reads traces."""

    def propose(self, messages: list[dict]) -> Reply:
        if not any(message["role"] == "assistant" for message in messages):
            return Reply(tool_calls=[{"name": "read_file", "arguments": {"path": LINK}}])
        return super().propose(messages[:2] + messages[4:])


def planted_workspace(tmp_path: Path, base_url: str, secret: Path):
    ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", base_url)
    config = ws.root / "wikiskill.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "wiki:\n  consolidate_every: 1\n", encoding="utf-8")
    (ws.root / LINK).symlink_to(secret)
    (ws.root / "skills/linked-skill").mkdir()
    (ws.root / "skills/linked-skill/SKILL.md").symlink_to(secret)
    person = ["-c", "user.name=Person", "-c", "user.email=person@example.invalid"]
    git(ws.root, *person, "add", "wikiskill.yaml", LINK, "skills/linked-skill/SKILL.md")
    git(ws.root, *person, "commit", "-qm", "a page and a skill that are symlinks")
    return ws


def test_a_symlinked_page_survives_consolidation_and_reaches_no_model(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text(f"{SECRET}\n", encoding="utf-8")
    with FakeOpenAIServer(ReadsTheLink()) as server:
        ws = planted_workspace(tmp_path, server.base_url, secret)
        result = api.evolve(ws, 1)
        requests = json.dumps(server.requests)
    assert result.rounds_completed == 1
    steps = git(ws.root, "log", "--first-parent", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "main")
    assert "consolidate" in steps.split()
    for path in (LINK, "skills/linked-skill/SKILL.md"):
        assert os.readlink(ws.root / path) == str(secret)
        assert git(ws.root, "ls-tree", "main", "--", path).startswith("120000 ")
        assert git(ws.root, "cat-file", "-p", f"main:{path}") == str(secret)
        assert git(ws.root, "log", "--format=%s", "main", "--", path).splitlines() == [
            "a page and a skill that are symlinks"
        ]
    assert secret.read_text(encoding="utf-8") == f"{SECRET}\n"
    assert SECRET not in requests and "elsewhere" not in requests and "secret.txt" not in requests
    assert "evil-link" not in git(ws.root, "show", "main:wiki/index.md")
    refusals = [
        message["content"]
        for body in server.requests
        for message in body["messages"]
        if message["role"] == "tool" and LINK in str(message["content"])
    ]
    assert refusals and all("symbolic link" in text for text in refusals)
    assert "linked-skill" not in {skill.name for skill in api.load_skills(ws)}
    assert api.status(ws).wiki_pages == len(list((ws.root / "wiki/patterns").glob("*.md"))) - 1


def test_lint_names_each_symlink_in_one_line(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n", encoding="utf-8")
    ws = planted_workspace(tmp_path, "http://127.0.0.1:9", secret)
    run = subprocess.run(
        [sys.executable, "-m", "wikiskill", "-C", str(ws.root), "lint"], capture_output=True, text=True, timeout=120
    )
    lines = run.stdout.splitlines()
    assert run.returncode != 0
    for path in (LINK, "skills/linked-skill/SKILL.md"):
        assert [line for line in lines if line.startswith(path)] == [
            f"{path}: is a symbolic link, not read (skills/ and wiki/ hold plain files only)"
        ]
    assert SECRET not in run.stdout + run.stderr


def test_a_maintainer_page_named_like_a_link_is_not_written_over_it(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n", encoding="utf-8")
    reply = {**MAINTAINER_REPLY, "create_patterns": [{**MAINTAINER_REPLY["create_patterns"][0], "name": "evil-link"}]}
    with FakeOpenAIServer(ScriptedWorld(maintainer_reply=reply)) as server:
        ws = planted_workspace(tmp_path, server.base_url, secret)
        api.evolve(ws, 1)
    assert os.readlink(ws.root / LINK) == str(secret)
    assert git(ws.root, "cat-file", "-p", f"main:{LINK}") == str(secret)
    maintain = git(ws.root, "log", "--format=%B", "--grep=maintain:", "-1", "main")
    assert f"- left alone, not written: {LINK} is a symbolic link" in maintain


def test_a_proposal_to_create_a_skill_whose_folder_is_a_persons_link_is_invalid_before_validation(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.md").write_text(f"{SECRET}\n", encoding="utf-8")
    world = ScriptedWorld(proposals={1: create("outlink", SPELL)})
    with FakeOpenAIServer(world) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        (ws.root / "skills/outlink").symlink_to(outside, target_is_directory=True)
        person = ["-c", "user.name=Person", "-c", "user.email=person@example.invalid"]
        git(ws.root, *person, "add", "skills/outlink")
        git(ws.root, *person, "commit", "-qm", "a skill folder that is a link")
        result = api.evolve(ws, 1)
    assert [decision.value for decision in result.decisions] == ["invalid"]
    gate = git(ws.root, "log", "-1", "--format=%B", "main")
    assert "invalid proposal: skills/outlink is a symbolic link; wikiskill never writes at or through one" in gate
    steps = git(ws.root, "log", "--all", "--format=%(trailers:key=Wikiskill-Step,valueonly)").split()
    assert "validate" not in steps and "propose" not in steps  # no candidate branch, no val task run for one
    assert git(ws.root, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags/rejected").split() == [
        "refs/heads/main"
    ]
    assert os.readlink(ws.root / "skills/outlink") == str(outside)
    assert sorted(path.name for path in outside.iterdir()) == ["notes.md"]


def test_a_roles_write_under_a_symlinked_skill_folder_is_refused_and_the_link_kept(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", "http://127.0.0.1:9")
    (ws.root / "skills/dirlink").symlink_to(outside, target_is_directory=True)
    person = ["-c", "user.name=Person", "-c", "user.email=person@example.invalid"]
    git(ws.root, *person, "add", "skills/dirlink")
    git(ws.root, *person, "commit", "-qm", "a skill folder that is a link")
    harness = Harness.open(ws)
    written = {"skills/dirlink/SKILL.md": "---\nname: dirlink\n---\n", "wiki/patterns/kept.md": "# kept\n"}
    sha = harness.publishing.commit("propose: create dirlink", Trailers(round=1, step=Step.PROPOSE), written)
    assert os.readlink(ws.root / "skills/dirlink") == str(outside) and list(outside.iterdir()) == []
    assert git(ws.root, "ls-tree", "main", "skills/dirlink").startswith("120000 blob ")
    assert "skills/dirlink/SKILL.md" not in ws.list_paths(MAIN, "skills")
    assert ws.read_file(MAIN, "wiki/patterns/kept.md") == "# kept\n"  # the rest of the write goes in
    assert "- left alone, not written: skills/dirlink/SKILL.md is a symbolic link" in ws.body(sha)
