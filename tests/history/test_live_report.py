"""`wikiskill report --serve`: the report on loopback, refreshed in the browser while a run goes.

The end-to-end test runs a real `evolve` and a real `report --serve` as processes, against the
scripted local model server, opens the page in a real headless Chromium (driven over the DevTools
protocol) and watches round 1 appear in the page it loaded, with no reload; its screenshot is kept
under test-artifacts/."""

import base64
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git, installed, needs_chromium
from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.cli import app
from wikiskill.loop.harness import QuietReporter
from wikiskill.loop.progress_file import PROGRESS_FILE, ProgressRecorder, RunProgress
from wikiskill.store.traces import Usage
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import commit_skills, hears_ctrl_c, new_workspace, until

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture
def served(tmp_path):
    ws = new_workspace(tmp_path)
    server = api.live_report(ws, 0)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield ws, server
    server.shutdown()
    server.server_close()


def get(server, path: str) -> bytes:
    with urllib.request.urlopen(server.url + path.lstrip("/"), timeout=10) as response:
        return response.read()


def live_state(server) -> dict:
    return json.loads(get(server, "/live.json"))


def test_the_live_state_has_the_runs_progress_and_tells_a_running_run_from_a_gone_one(served):
    ws, server = served
    assert live_state(server)["progress"] is None
    recorder = ProgressRecorder(ws.state_dir, QuietReporter(), lambda: Usage(prompt_tokens=7, cost_usd=0.125))
    with recorder.tasks("r001 rollout: train", total=8):
        state = live_state(server)
        assert state["running"] and state["progress"]["bar"]["total"] == 8
        assert (state["progress"]["cost_usd"], state["progress"]["tokens"]) == (0.125, 7)
    recorder.finish()
    assert not live_state(server)["running"]

    gone = subprocess.Popen(["true"])
    gone.wait()
    killed = RunProgress(pid=gone.pid, started=0, updated=0, message="r001 rollout: train")
    (ws.state_dir / PROGRESS_FILE).write_text(killed.model_dump_json())
    state = live_state(server)
    assert not state["running"] and not state["progress"]["finished"]  # killed: the page says it stopped


def test_a_committed_step_moves_the_version_and_the_page_shows_it(served):
    ws, server = served
    before, page = live_state(server)["version"], get(server, "/").decode()
    assert f'data-version="{before}"' in page and "0 round(s) completed" in page
    assert '<script src="/plotly.min.js">' in page and len(page) < 200_000  # plotly.js is served apart
    assert b"Plotly" in get(server, "/plotly.min.js")

    commit_skills(ws, ["spell-letters"], round_number=1, step="rollout", decision=None)  # a step lands
    stepped = live_state(server)["version"]
    assert stepped != before and f'data-version="{stepped}"' in get(server, "/").decode()
    ws.tag("round/001", ws.head())  # and the round closes
    closed = live_state(server)["version"]
    assert closed != stepped
    page = get(server, "/").decode()
    assert f'data-version="{closed}"' in page and "1 round(s) completed" in page and "spell-letters" in page


def test_serving_the_report_writes_nothing_in_the_workspace_and_takes_no_lock(served):
    ws, server = served
    commit_skills(ws, ["spell-letters"], round_number=1, step="rollout", decision=None)

    def files() -> dict[str, tuple[int, int]]:
        return {
            str(path.relative_to(ws.root)): (path.stat().st_mtime_ns, path.stat().st_size)
            for path in ws.root.rglob("*")
            if path.is_file()
        }

    with ws.lock("wikiskill evolve"):  # a run holds the workspace: the server still answers
        before = files()
        for path in ("/", "/live.json", "/plotly.min.js", "/live.json"):
            get(server, path)
        assert files() == before
    assert git(ws.root, "status", "--porcelain", "--ignored") == "!! .wikiskill/\n"
    with pytest.raises(urllib.error.HTTPError, match="404"):
        get(server, "/wikiskill.yaml")


def test_a_port_in_use_or_out_of_range_is_refused_in_one_line(served):
    ws, server = served
    taken = server.server_address[1]
    for port, message in ((taken, f"error: port {taken} on 127.0.0.1 is in use"), (70000, "error: --port 70000")):
        result = CliRunner().invoke(app, ["-C", str(ws.root), "report", "--serve", "--port", str(port)])
        assert result.exit_code == 1
        assert result.output.startswith(message) and result.output.count("\n") == 1, result.output


class HeldWorld(ScriptedWorld):
    """The scripted world, paused twice until the test lets it go on: at the skill proposer's first
    call, and at the first answer of the candidate's validation (the first prompt with SPELL)."""

    def __init__(self):
        super().__init__()
        self.holds = {"propose": threading.Event(), "validate": threading.Event()}
        self.reached = {name: threading.Event() for name in self.holds}

    def __call__(self, body: dict):
        system = body["messages"][0]["content"]
        if system.startswith("You are a Skill Proposer Agent"):
            self._hold("propose")
        elif SPELL in system:
            self._hold("validate")
        return super().__call__(body)

    def _hold(self, name: str) -> None:
        if not self.reached[name].is_set():
            self.reached[name].set()
            self.holds[name].wait(60)


class Tab:
    """A headless Chromium's page, driven over the DevTools protocol."""

    def __init__(self, profile: Path, connect):
        self.process = subprocess.Popen(
            [
                installed(*needs_chromium.args),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--proxy-server=127.0.0.1:9",  # every request refused but loopback's, which bypasses proxies
                "--remote-debugging-port=0",
                "--window-size=1280,1400",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        active = profile / "DevToolsActivePort"
        port = until(lambda: active.is_file() and active.read_text().split("\n")[0], 30)
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        page = next(target for target in targets if target["type"] == "page")
        self.socket = connect(page["webSocketDebuggerUrl"], max_size=None)
        self.ids = itertools.count(1)

    def call(self, method: str, **params) -> dict:
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=30))
            if message.get("id") == number:
                assert "error" not in message, message
                return message["result"]

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def text(self, selector: str) -> str:
        return self.evaluate(f"document.querySelector({json.dumps(selector)})?.textContent ?? ''")

    def until(self, condition, timeout: float = 30):
        """`until`, saying what the page showed when the condition never held."""
        try:
            return until(condition, timeout)
        except AssertionError:
            shown = self.evaluate("document.body ? document.body.innerText.slice(0, 600) : document.readyState")
            raise AssertionError(f"not shown within {timeout} s; the page showed: {shown!r}") from None

    def close(self) -> None:
        self.socket.close()
        self.process.kill()
        self.process.wait()


def wikiskill(*args: str, **options) -> subprocess.Popen:
    """`wikiskill ARGS` as a process of its own, running this checkout's code."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "wikiskill", *args], env=env, text=True, **options)


@contextlib.contextmanager
def killed_at_exit(process: subprocess.Popen):
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.mark.slow
@needs_chromium
def test_the_served_report_shows_the_running_step_then_the_new_round_without_a_reload(tmp_path):
    client = pytest.importorskip("websockets.sync.client", reason="needs the test extra: pip install -e '.[test]'")
    world = HeldWorld()
    with contextlib.ExitStack() as stack:
        model = stack.enter_context(FakeOpenAIServer(world))
        stack.callback(lambda: [hold.set() for hold in world.holds.values()])  # before the server stops
        ws = api.init_workspace(
            tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", api_base=model.base_url, concurrency=8
        )
        served = wikiskill(
            "-C", str(ws.root), "report", "--serve", "--port", "0", stdout=subprocess.PIPE, preexec_fn=hears_ctrl_c
        )
        serve = stack.enter_context(killed_at_exit(served))
        log = stack.enter_context((tmp_path / "evolve.log").open("w"))
        running = wikiskill("-C", str(ws.root), "evolve", "--rounds", "1", stdout=log, stderr=subprocess.STDOUT)
        evolve = stack.enter_context(killed_at_exit(running))
        tab = stack.enter_context(contextlib.closing(Tab(tmp_path / "profile", client.connect)))
        banner = serve.stdout.readline()
        url = banner.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:"), banner

        tab.call("Page.navigate", url=url)  # while the run starts
        assert world.reached["propose"].wait(60), "the run never reached its proposer"
        tab.until(lambda: "propose" in tab.text("#live-state"))
        assert "0 round(s) completed" in tab.text(".summary")
        assert "tokens" in tab.text("#live-detail")
        tab.evaluate("window.loadedOnce = true")

        world.holds["propose"].set()
        assert world.reached["validate"].wait(60), "the run never validated its candidate"
        tab.until(lambda: "validate: val" in tab.text("#live-state") and "/6 tasks" in tab.text("#live-tasks"))

        world.holds["validate"].set()
        assert evolve.wait(60) == 0, (tmp_path / "evolve.log").read_text()
        tab.until(lambda: "1 round(s) completed" in tab.text(".summary"))
        tab.until(lambda: "finished" in tab.text("#live-state"))
        assert tab.evaluate("window.loadedOnce === true && performance.getEntriesByType('navigation').length === 1")
        assert "spell-letters" in tab.text("#report")  # the accepted skill, in the swapped-in report
        assert tab.evaluate("document.querySelectorAll('#chart-val .point').length") >= 2  # the chart redrawn

        screenshot = base64.b64decode(tab.call("Page.captureScreenshot", format="png")["data"])
        for folder in (tmp_path, ARTIFACTS):
            folder.mkdir(exist_ok=True)
            (folder / "live-report.png").write_bytes(screenshot)
        assert len(screenshot) > 20_000
        print(f"live report screenshot: {ARTIFACTS / 'live-report.png'}")

        serve.send_signal(signal.SIGINT)  # Ctrl-C
        assert serve.wait(10) == 0
        assert "Stopped serving the report." in serve.stdout.read()
