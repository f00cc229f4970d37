"""`wikiskill estimate` / `evolve --dry-run` say what a round will call before it runs, and
`budget.max_usd` refuses a round whose estimate it cannot pay for before any model call."""

import shutil

import pytest
from typer.testing import CliRunner

from conftest import git
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.cli import app
from wikiskill.roles.settings import Role
from wikiskill.store.rounds import REJECTED_PREFIX, completed_rounds
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import edit_config

PRICED = "openai/gpt-4o-mini"
"""litellm prices it from its bundled map; the scripted server answers any model name."""
SYSTEM_OF = {
    Role.MAINTAINER: "You are a Wiki Maintainer Agent",
    Role.PROPOSER: "You are a Skill Proposer Agent",
}


def role_of(request: dict) -> Role:
    system = request["messages"][0]["content"]
    return next((role for role, start in SYSTEM_OF.items() if system.startswith(start)), Role.AGENT)


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(ScriptedWorld()) as running:
        yield running


def workspace_state(ws, *status: str) -> tuple[str, str, str]:
    """What a command must leave as it was: the working tree, every ref, HEAD."""
    return git(ws, "status", "--porcelain", *status), git(ws, "for-each-ref"), git(ws, "rev-parse", "HEAD")


def spent_in_round(ws, number: int) -> dict[Role, tuple[int, float]]:
    """Tokens and USD per role that the trailers of round `number`'s commits record, on main and
    on its candidate's branch (merged into main, or kept as a rejected tag)."""
    workspace = api.open_workspace(ws)
    tags = list(workspace.refs(f"refs/tags/{REJECTED_PREFIX}"))
    commits = {c.sha: c for ref in ["main", *tags] for c in workspace.log(ref, first_parent=False)}
    spent: dict[Role, tuple[int, float]] = {}
    for commit in commits.values():
        if commit.meta.round != number:
            continue
        for role in Role:
            tokens, usd = spent.get(role, (0, 0.0))
            spent[role] = (
                tokens + commit.meta.role_tokens.get(role.value, 0),
                usd + commit.meta.role_costs.get(role.value, 0.0),
            )
    return spent


@pytest.mark.slow
def test_estimate_of_a_scripted_round_is_within_a_fifth_of_what_it_spends(server, tmp_path):
    ws = tmp_path / "ws"
    invoke("init", str(ws), "--benchmark", "example-qa", "--model", PRICED, "--api-base", server.base_url)
    invoke("-C", str(ws), "evolve", "--rounds", "1")
    estimate = api.estimate(api.open_workspace(ws)).rounds[0]
    assert estimate.round == 2
    assert {part.basis for part in estimate.parts} == {"measured in r001"}

    asked_before = len(server.requests)
    invoke("-C", str(ws), "evolve", "--rounds", "1")
    calls = {role: 0 for role in Role}
    for request in server.requests[asked_before:]:
        calls[role_of(request)] += 1
    spent = spent_in_round(ws, 2)
    for role in (Role.AGENT, Role.MAINTAINER, Role.PROPOSER):
        estimated_calls, estimated_tokens = estimate.of(role)
        tokens, _ = spent[role]
        assert calls[role] > 0 and tokens > 0
        assert abs(estimated_calls - calls[role]) <= 0.2 * calls[role], (role, estimated_calls, calls[role])
        assert abs(estimated_tokens - tokens) <= 0.2 * tokens, (role, estimated_tokens, tokens)
    usd = sum(each[1] for each in spent.values())
    assert abs(estimate.usd - usd) <= 0.2 * usd

    third = api.estimate(api.open_workspace(ws)).rounds[0]
    edit_config(api.open_workspace(ws), **{"budget.max_usd": round(third.usd * 0.9, 6)})
    asked_before = len(server.requests)
    result = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
    assert result.exit_code == 1 and "budget too small for r003" in result.output
    assert len(server.requests) == asked_before


def test_dry_run_and_estimate_write_nothing_and_call_no_model(server, tmp_path):
    ws = tmp_path / "ws"
    invoke("init", str(ws), "--benchmark", "example-qa", "--model", PRICED, "--api-base", server.base_url)
    before, asked = workspace_state(ws, "--ignored"), len(server.requests)
    dry_run = invoke("-C", str(ws), "evolve", "--rounds", "3", "--dry-run")
    estimate = invoke("-C", str(ws), "estimate")
    assert workspace_state(ws, "--ignored") == before  # .wikiskill/ included
    assert len(server.requests) == asked
    for output in (dry_run, estimate):
        assert "agent on train" in output and "agent on val, main" in output and "proposer" in output
        assert "defaults" in output and "r001: about" in output
    assert "3 rounds: about" in dry_run


def test_a_budget_below_one_rounds_estimate_refuses_before_any_model_call(tmp_path):
    with FakeOpenAIServer(ScriptedWorld()) as fresh:
        ws = tmp_path / "ws"
        invoke("init", str(ws), "--benchmark", "example-qa", "--model", PRICED, "--api-base", fresh.base_url)
        workspace = api.open_workspace(ws)
        first = api.estimate(workspace).rounds[0]
        assert {part.basis for part in first.parts} == {"defaults"}  # no round, no baseline yet
        limit = round(first.usd / 2, 6)
        edit_config(workspace, **{"budget.max_usd": limit})
        git(ws, "commit", "-qam", "a budget")
        before = workspace_state(ws)

        result = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        assert fresh.requests == []
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: budget too small for r001: it would spend about $")
    assert f"over budget.max_usd ${limit}" in errors[0]
    assert workspace_state(ws) == before


def spent_usd(ws) -> float:
    """The USD every commit of the workspace records, on every branch and tag."""
    return sum(map(float, git(ws, "log", "--all", "--format=%(trailers:key=Wikiskill-Cost-USD,valueonly)").split()))


@pytest.mark.slow
def test_the_budget_is_checked_before_every_round_of_evolve_not_only_the_first(tmp_path):
    with FakeOpenAIServer(ScriptedWorld()) as measured:
        ws = tmp_path / "measured"
        invoke("init", str(ws), "--benchmark", "example-qa", "--model", PRICED, "--api-base", measured.base_url)
        invoke("-C", str(ws), "evolve", "--rounds", "1")  # round 1 measures what a round calls
        shutil.copytree(ws, tmp_path / "budgeted", symlinks=True)
        second, before, first_calls = (
            api.estimate(api.open_workspace(ws)).rounds[0].usd,
            spent_usd(ws),
            len(measured.requests),
        )
        invoke("-C", str(ws), "evolve", "--rounds", "1")
        spent, third = spent_usd(ws) - before, api.estimate(api.open_workspace(ws)).rounds[0].usd
        calls = len(measured.requests) - first_calls
    # enough to start round 2 and finish it, not enough for round 3's estimate on top of round 2
    assert max(second, spent) < spent + third
    limit = round((max(second, spent) + spent + third) / 2, 6)
    ws = api.open_workspace(tmp_path / "budgeted")
    edit_config(ws, **{"budget.max_usd": limit})
    git(ws.root, "commit", "-qam", "a budget")
    with FakeOpenAIServer(ScriptedWorld()) as fresh:
        result = CliRunner().invoke(app, ["-C", str(ws.root), "evolve", "--rounds", "2", "--api-base", fresh.base_url])
        assert len(fresh.requests) == calls  # round 2's calls, none of round 3's
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: budget too small for r003: it would spend about $")
    assert completed_rounds(ws) == 2


def test_an_unpriced_estimate_names_the_roles_it_leaves_out(tmp_path):
    ws = api.init_workspace(
        tmp_path / "ws", benchmark="example-qa", model="openai/no-such-priced-model", api_base="http://127.0.0.1:9/v1"
    )
    out = invoke("-C", str(ws.root), "estimate")
    assert "USD leaves out the calls of the agent, maintainer, proposer: litellm has no price for their models" in out


def test_a_dry_run_of_rounds_that_call_no_model_says_how_many_rounds(tmp_path):
    ws = api.init_workspace(tmp_path / "ws", benchmark="textworld-cooking", model="offline", train=2, val=2)
    out = invoke("-C", str(ws.root), "evolve", "--rounds", "5", "--dry-run")
    assert out.strip() == "the next 5 rounds (r001-r005) call no model: every role that would is offline or done"


def test_doctor_and_estimate_give_a_rounds_wall_time_from_the_measured_speed_and_warn_past_an_hour(tmp_path):
    ws = tmp_path / "ws"
    with FakeOpenAIServer(ScriptedWorld(), latency=1.0) as slow:  # a second for a few dozen tokens
        invoke("init", str(ws), "--benchmark", "example-qa", "--model", PRICED, "--api-base", slow.base_url)
        unknown = invoke("-C", str(ws), "estimate")
        doctor = invoke("-C", str(ws), "doctor")
        asked = len(slow.requests)
        estimate = invoke("-C", str(ws), "estimate")
        assert len(slow.requests) == asked  # estimate still calls no model
    assert "r001: wall time unknown: nothing has measured the speed" in unknown and "`wikiskill doctor`" in unknown
    timed = [line for line in estimate.splitlines() if "of model time at the servers' measured speed" in line]
    assert timed and timed[0].startswith("r001: about ") and " h " in timed[0]
    assert "warning: more than an hour a round" in " ".join(estimate.split())
    assert " ".join(timed[0].split()) in " ".join(doctor.split())
    seconds = api.estimate(api.open_workspace(ws)).rounds[0].seconds
    assert seconds is not None and seconds > 3600
