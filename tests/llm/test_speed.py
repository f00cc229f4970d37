"""The measured speed of a server is shared by every role of a command and kept in the workspace's
state folder, so the next command's first call (a resumed round's maintainer) is already sized."""

import time

from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.llm.speed import SpeedBook
from wikiskill.roles.settings import Role, RoleSettings
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply


def slow(body):
    """A tenth of a millisecond per prompt token."""
    prompt = sum(len(m.get("content") or "") for m in body["messages"]) // 4
    time.sleep(prompt * 0.0001)
    return Reply(content="ok", prompt_tokens=prompt, completion_tokens=1)


def model(server, role: Role, speeds: SpeedBook) -> LiteLLMModel:
    settings = RoleSettings(model="openai/fake-model", api_base=server.base_url, context_window=128_000, max_tokens=8)
    return LiteLLMModel(settings, LLMSettings(retries=0, timeout=0.2), role, Meter(), speeds=speeds)


def test_a_speed_one_command_measured_sizes_the_next_commands_first_call(tmp_path):
    path = tmp_path / ".wikiskill" / "server-speed.json"
    with FakeOpenAIServer(slow) as server:
        first = SpeedBook(path)
        agent = model(server, Role.AGENT, first)
        for size in (400, 2000, 4000):  # the first call of a process is not measured
            agent.complete([{"role": "user", "content": "x" * size}])
        first.save()
        later = model(server, Role.MAINTAINER, SpeedBook(path))
        assert later.prompt_budget() is not None
        reply = later.complete([{"role": "user", "content": "x" * 16000}], response_model=None)  # about 0.4 s
    assert reply.content == "ok"
    assert any(note.startswith("timeout ") and "rather than 0.2s" in note for note in reply.notes), reply.notes


def test_an_unreadable_speed_file_starts_an_empty_book_and_nothing_new_is_not_written(tmp_path):
    path = tmp_path / "server-speed.json"
    path.write_text("{not json")
    book = SpeedBook(path)
    assert book.of("openai/x", None).seconds(100, 10) is None
    book.save()
    assert path.read_text() == "{not json"
