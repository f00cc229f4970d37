"""Which API key a model needs: checked before a run starts, and named when a provider refuses one."""

from __future__ import annotations

import os

from ..benchmarks import spec_of
from ..core.config import OFFLINE_MODEL, Config
from ..core.errors import ConfigError
from ..roles.settings import Role, RoleSettings
from .backend import import_litellm

KEY_ENV = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY",),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "ollama": (),
    "ollama_chat": (),
    "hosted_vllm": (),
    "lm_studio": (),
}
"""The API key variable(s) of common providers, any one of which will do (a test checks them
against litellm's `validate_environment`); other providers ask litellm, whose import is slow."""


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


def key_names(settings: RoleSettings) -> str:
    """The variable(s) holding the key of this role's provider, as one phrase."""
    names = KEY_ENV.get(_provider(settings.model or ""))
    return " or ".join(names) if names else "the provider's API key variable"


def key_advice(settings: RoleSettings) -> str:
    return f"set {key_names(settings)} in the environment, or point `api_base` at a local OpenAI-compatible server"


def missing_key(settings: RoleSettings) -> str | None:
    """The environment variable(s) this role's model needs and lacks, as one phrase; None when
    none is missing. Known providers are checked without importing litellm."""
    model = settings.model or ""
    if model == OFFLINE_MODEL or settings.api_base:
        return None
    provider = _provider(model)
    if provider in KEY_ENV:
        names = KEY_ENV[provider]
        return None if not names or any(os.environ.get(name) for name in names) else " or ".join(names)
    missing = import_litellm().validate_environment(model=model).get("missing_keys") or []
    return " and ".join(missing) or None


def roles_in_use(config: Config) -> list[Role]:
    """The roles that call a model under `config`: the judge only on a suite scored by one."""
    judged = spec_of(config.benchmark).judged
    return [role for role in Role if role is not Role.JUDGE or judged]


def check_credentials(config: Config) -> None:
    """Raise one ConfigError naming the variable to set when a role's provider key is missing: a
    setting of the run, like the others checked before it starts, not a failed model call."""
    for role in roles_in_use(config):
        settings = config.role(role)
        missing = missing_key(settings)
        if missing:
            raise ConfigError(
                f"the {role}'s model {settings.model} needs {missing}: set it in the environment, "
                "or point `api_base` at a local OpenAI-compatible server (`--api-base URL`)"
            )
