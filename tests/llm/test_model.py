"""LiteLLMModel against a scripted local server: retries on 429 (honouring Retry-After), 500 and
503; a clean ModelError once the retries are spent or for an error that retrying cannot fix;
the on-disk response cache; the budget. Backoff sleeps are recorded instead of slept."""

import asyncio

import pytest

from wikiskill.core.errors import BudgetExceeded, ModelError
from wikiskill.llm.cache import ResponseCache
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import BudgetSettings, LLMSettings
from wikiskill.roles.settings import RoleSettings
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

MESSAGES = [{"role": "user", "content": "Say ok."}]


class Script:
    """Answers with the scripted faults first, then `ok` forever."""

    def __init__(self, *faults: Reply):
        self.faults = list(faults)

    def __call__(self, body: dict) -> Reply | str:
        return self.faults.pop(0) if self.faults else Reply(content="ok", prompt_tokens=5, completion_tokens=2)


@pytest.fixture()
def sleeps(monkeypatch) -> list[float]:
    recorded: list[float] = []

    async def fake_async_sleep(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr("wikiskill.llm.model.time.sleep", recorded.append)
    monkeypatch.setattr("wikiskill.llm.model.asyncio.sleep", fake_async_sleep)
    return recorded


def model(
    server: FakeOpenAIServer,
    retries: int = 3,
    meter: Meter | None = None,
    cache: ResponseCache | None = None,
    role: str = "maintainer",
    name: str = "openai/fake-model",
) -> LiteLLMModel:
    settings = RoleSettings(model=name, api_base=server.base_url)
    return LiteLLMModel(settings, LLMSettings(retries=retries, timeout=10), role, meter or Meter(), cache)


def test_429_waits_as_long_as_retry_after_says(sleeps):
    limited = Reply(status=429, headers={"Retry-After": "7"}, content="slow down")
    with FakeOpenAIServer(Script(limited, limited)) as server:
        meter = Meter()
        reply = model(server, meter=meter).complete(MESSAGES)
    assert reply.content == "ok"
    assert len(server.requests) == 3
    assert len(sleeps) == 2 and all(seconds >= 7 for seconds in sleeps)
    assert meter.total.calls == 1 and meter.total.tokens == 7


def test_500_and_503_are_retried_async(sleeps):
    with FakeOpenAIServer(Script(Reply(status=500), Reply(status=503), Reply(content="x", truncate=True))) as server:
        reply = asyncio.run(model(server).acomplete(MESSAGES))
    assert reply.content == "ok"
    assert len(server.requests) == 4
    assert len(sleeps) == 3


def test_gives_up_with_one_clean_model_error(sleeps):
    with FakeOpenAIServer(Script(*[Reply(status=503)] * 10)) as server:
        with pytest.raises(ModelError) as info:
            model(server, retries=2).complete(MESSAGES)
    assert len(server.requests) == 3
    message = str(info.value)
    assert "gave up after 3 attempts" in message and "ServiceUnavailableError" in message
    assert "\n" not in message and info.value.__cause__ is None


def test_a_bad_request_is_not_retried(sleeps):
    with FakeOpenAIServer(Script(Reply(status=400, content="bad field"))) as server:
        with pytest.raises(ModelError, match="bad field"):
            model(server).complete(MESSAGES)
    assert len(server.requests) == 1 and sleeps == []


def test_a_cache_hit_is_free_and_makes_no_request(tmp_path):
    with FakeOpenAIServer(Script()) as server:
        meter = Meter()
        cache = ResponseCache(tmp_path / "responses.sqlite")
        first = model(server, meter=meter, cache=cache).complete(MESSAGES)
        again = model(server, meter=meter, cache=ResponseCache(tmp_path / "responses.sqlite"))
        second = asyncio.run(again.acomplete(MESSAGES))
        other = model(server, meter=meter, cache=cache).complete([{"role": "user", "content": "Something else."}])
    assert len(server.requests) == 2  # the first call and the different one
    assert second.content == first.content == other.content == "ok"
    assert second.usage.calls == 0 and second.usage.cost_usd == 0
    assert meter.total.calls == 2


def test_no_cache_above_temperature_zero(tmp_path):
    with FakeOpenAIServer(Script()) as server:
        settings = RoleSettings(model="openai/fake-model", api_base=server.base_url, temperature=0.7)
        warm = LiteLLMModel(settings, LLMSettings(), "agent", Meter(), ResponseCache(tmp_path / "r.sqlite"))
        warm.complete(MESSAGES)
        warm.complete(MESSAGES)
    assert len(server.requests) == 2


def test_budget_stops_a_role_before_its_next_call():
    with FakeOpenAIServer(Script()) as server:
        meter = Meter(BudgetSettings(max_calls=2))
        proposer = model(server, meter=meter, role="proposer")
        proposer.complete(MESSAGES)
        proposer.complete(MESSAGES)
        with pytest.raises(BudgetExceeded, match="2 of budget.max_calls 2"):
            proposer.complete(MESSAGES)
    assert len(server.requests) == 2


def test_cost_of_a_priced_model_is_counted():
    """litellm prices `openai/gpt-4o-mini` from its bundled map; the fake server answers any name."""
    with FakeOpenAIServer(Script()) as server:
        meter = Meter(BudgetSettings(max_usd=1e-9))
        reply = model(server, meter=meter, name="openai/gpt-4o-mini").complete(MESSAGES)
        assert reply.usage.cost_usd > 0
        with pytest.raises(BudgetExceeded, match="max_usd"):
            meter.check()
