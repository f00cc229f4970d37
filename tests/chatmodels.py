"""Role models that talk to a local FakeOpenAIServer, for tests of a role through its own interface."""

from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.settings import RoleSettings
from wikiskill.testing.fakeserver import FakeOpenAIServer


def served_model(server: FakeOpenAIServer, role: str) -> LiteLLMModel:
    """A `role` model whose calls go to `server`, with no retries (a failure shows at once)."""
    return LiteLLMModel(
        RoleSettings(model="openai/fake-model", api_base=server.base_url, context_window=128_000),
        LLMSettings(retries=0),
        role,
        Meter(),
    )
