"""`wikiskill mcp`: the MCP SDK's own client talks to the real command over stdio and streamable
HTTP; skills merged into main while the client stays connected are served without a restart."""

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from wikiskill import api
from wikiskill.cli import app
from wikiskill.store.workspace import Workspace, format_message
from workspaces import TOPICS, commit_skills, merge_skill, new_workspace

TIMEOUT = 60


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    workspace = new_workspace(tmp_path)
    commit_skills(workspace, ["spell-letters", "convert-units"])
    return workspace


def wikiskill_mcp(ws: Workspace, *args: str) -> list[str]:
    return [sys.executable, "-m", "wikiskill", "-C", str(ws.root), "mcp", *args]


async def names(session: ClientSession) -> list[str]:
    listed = await session.call_tool("list_skills", {})
    assert not listed.is_error
    return [skill["name"] for skill in listed.structured_content["result"]]


async def text(session: ClientSession, tool: str, arguments: dict) -> str:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.content[0].text


def test_a_connected_client_sees_skills_the_gate_merges_and_retires_without_a_restart(ws):
    async def scenario():
        command = wikiskill_mcp(ws, "--ref", "main")
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert tools == {"list_skills", "load_skill", "search", "skills_prompt"}
            assert await names(session) == ["convert-units", "spell-letters"]

            merge_skill(ws, "quote-shell-paths", 2)  # a real merge commit on main, as the gate makes it
            assert await names(session) == ["convert-units", "quote-shell-paths", "spell-letters"]
            body = await text(session, "load_skill", {"name": "quote-shell-paths"})
            assert "Follow the quote-shell-paths steps" in body
            resources = [str(resource.uri) for resource in (await session.list_resources()).resources]
            assert resources == ["skill://convert-units", "skill://quote-shell-paths", "skill://spell-letters"]
            read = await session.read_resource("skill://quote-shell-paths")
            assert read.contents[0].text == (ws.root / "skills/quote-shell-paths/SKILL.md").read_text(encoding="utf-8")
            hits = (await session.call_tool("search", {"query": "file name contains spaces"})).structured_content
            assert hits["result"][0]["path"] == "skills/quote-shell-paths/SKILL.md"
            assert await text(session, "skills_prompt", {"mode": "full"}) == api.prompt(ws, mode="full")

            ws.commit(
                {"skills/spell-letters/SKILL.md": None, "skills/spell-letters/PURPOSE.md": None},
                format_message("r3 gate: retire spell-letters", {"Round": 3, "Step": "gate", "Decision": "accepted"}),
            )
            assert await names(session) == ["convert-units", "quote-shell-paths"]
            gone = await session.call_tool("load_skill", {"name": "spell-letters"})
            assert gone.is_error and "no skill named 'spell-letters'" in gone.content[0].text

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))


def test_the_server_reads_the_ref_it_was_given(ws):
    ws.create_branch("candidate", "main")
    commit_skills(ws, ["check-leap-years"], round_number=2, step="propose", decision=None, branch="candidate")

    async def scenario():
        command = wikiskill_mcp(ws, "--ref", "candidate")
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert await names(session) == ["check-leap-years", "convert-units", "spell-letters"]
            retrieved = await text(
                session, "skills_prompt", {"task": "a date falls on February 29", "mode": "retrieve"}
            )
            assert 'name="check-leap-years"' in retrieved

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_http_transport_serves_the_same_tools(ws):
    port = free_port()
    server = subprocess.Popen(
        wikiskill_mcp(ws, "--transport", "http", "--port", str(port)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )

    async def scenario():
        url = f"http://127.0.0.1:{port}/mcp"
        while True:  # until uvicorn listens
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                await asyncio.sleep(0.1)
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert await names(session) == ["convert-units", "spell-letters"]
            description = TOPICS["convert-units"][0]
            assert description in await text(session, "skills_prompt", {"mode": "index"})

    try:
        asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--transport", "carrier-pigeon"], "unknown transport 'carrier-pigeon': use stdio or http"),
        (["--ref", "no-such-branch"], "no-such-branch"),
    ],
)
def test_bad_arguments_are_one_line_errors(ws, args, message):
    result = CliRunner().invoke(app, ["-C", str(ws.root), "mcp", *args])
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
