"""Every commit wikiskill writes has a subject git's one-line views show whole: at most 72
characters, cut only where a clause ends, the rest of the reason in the body."""

from conftest import git
from inprocess import evolve_scripted, scripted_workspace
from scripted import SPELL, ScriptedWorld, create
from wikiskill import api
from wikiskill.store.subjects import SUBJECT_LIMIT, short_subject
from wikiskill.store.trailers import format_message
from workspaces import edit_config

LONG_NAME = "spell-every-reversed-word-letter-by-letter-before-answering-it"


def reads_whole(subject: str) -> bool:
    return subject.count("(") == subject.count(")") and not subject.rstrip("…").endswith((":", ",", ";", "("))


def test_every_subject_of_a_run_with_rejections_and_a_rollback_fits_and_reads_whole(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.cost": "tiebreak"})
    proposals = {1: create(LONG_NAME, SPELL), 2: create("useless-hint", "USELESS"), 4: create("other-hint", "NONE")}
    evolve_scripted(ws, rounds=2, world=ScriptedWorld(proposals))
    api.rollback(ws, LONG_NAME)
    evolve_scripted(ws, rounds=2, world=ScriptedWorld(proposals))
    subjects = git(ws.root, "log", "--all", "--format=%s").splitlines()
    bodies = git(ws.root, "log", "--all", "--format=%B")
    assert any("rejected" in s for s in subjects) and any(s.startswith("rollback:") for s in subjects)
    assert "no cost tiebreak" in bodies  # the reason the subject had no room for
    too_long = [s for s in subjects if len(s) > SUBJECT_LIMIT or not reads_whole(s)]
    assert not too_long


def test_a_long_gate_subject_loses_its_parenthetical_to_the_body():
    reason = "val 0.201 = incumbent 0.201 (needs a strict improvement); no cost tiebreak: 0 tokens"
    message = format_message(f"r004 gate: rejected prefer-scoring-actions ({reason})", {"Round": 4, "Step": "gate"})
    subject, _, rest = message.partition("\n\n")
    assert subject == "r004 gate: rejected prefer-scoring-actions"
    assert rest.startswith(f"r004 gate: rejected prefer-scoring-actions ({reason})")


def test_a_subject_that_is_one_long_clause_is_cut_between_words_and_says_so():
    whole = "rollback: revert " + " ".join(f"skill-{n}" for n in range(20))
    subject = short_subject(whole)
    assert len(subject) <= SUBJECT_LIMIT and subject.endswith("…")
    assert whole[len(subject) - 1] == " " or whole[len(subject) - 2] == "-"
