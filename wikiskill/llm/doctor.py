"""`wikiskill doctor`: probe each role's model once and say what it can do.

Two small requests per distinct model: one offering a tool (does the model call it natively, as
text, or not at all; how long did it take) and one asking for a JSON object (with the schema
sent as `response_format` where the role would send it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pydantic import BaseModel

from ..core.config import OFFLINE_MODEL, Config
from ..core.errors import WikiskillError
from ..roles.settings import Role, RoleSettings, StructuredOutput, ToolProtocol
from .backend import import_litellm
from .credentials import missing_key, roles_in_use
from .jsontext import extract_json
from .meter import Meter
from .model import LiteLLMModel
from .settings import LLMSettings
from .speed import SpeedBook
from .toolcalls import TEXT_CALL_PREFIX, tool_spec

DOCTOR_SYSTEM = "You are the connectivity check of wikiskill doctor."
PROBE_MAX_TOKENS = 200


class ReportArguments(BaseModel):
    status: str


class ProbeAnswer(BaseModel):
    status: str


REPORT_TOOL = tool_spec("report", "Report the check's status.", ReportArguments)


@dataclass
class RoleCheck:
    role: Role
    model: str
    reachable: bool | None = None
    """None: not probed (the offline model, or a missing key)."""
    latency_s: float | None = None
    json_ok: bool | None = None
    protocol: str = "—"
    """What the model did with an offered tool: `native`, `text`, or `none` (no call at all)."""
    configured_protocol: str = ""
    context_window: int | None = None
    price_known: bool | None = None
    api_base: str | None = None
    cause: str | None = None
    """Why the role cannot work or was not probed (an unreachable server's error, a missing key)."""
    failed: bool = False
    """The role cannot work as configured (unreachable, or its key is missing)."""
    notes: list[str] = field(default_factory=list)

    @property
    def problem(self) -> str | None:
        """The cause in one line that names the role, the model and the server it was asked at."""
        if self.cause is None:
            return None
        where = f" at {self.api_base}" if self.api_base else ""
        return f"{self.role} model {self.model}{where}: {self.cause}"


def diagnose(config: Config, speeds: SpeedBook | None = None) -> list[RoleCheck]:
    """One row per role; roles that share a model and server share one probe. Each probe's speed
    is measured into `speeds`."""
    speeds = speeds or SpeedBook()
    checks: list[RoleCheck] = []
    probed: dict[tuple[str | None, str | None, int | None, StructuredOutput], RoleCheck] = {}
    for role in roles_in_use(config):
        settings = config.role(role)
        key = (settings.model, settings.api_base, settings.context_window, settings.response_format)
        if key in probed:
            check = RoleCheck(**{**probed[key].__dict__, "role": role, "notes": list(probed[key].notes)})
        else:
            check = probed[key] = _probe(role, settings, config.llm, speeds)
        check.configured_protocol = settings.tool_protocol.value
        checks.append(check)
    return checks


def _probe(role: Role, settings: RoleSettings, llm: LLMSettings, speeds: SpeedBook) -> RoleCheck:
    check = RoleCheck(role=role, model=settings.model or "", api_base=settings.api_base)
    if settings.model == OFFLINE_MODEL:
        check.cause = "the built-in offline model (no LLM)"
        return check
    missing = missing_key(settings)
    if missing:
        check.cause, check.failed = f"needs {missing}", True
        return check
    probe_settings = settings.model_copy(
        update={"tool_protocol": ToolProtocol.AUTO, "temperature": 0.0, "max_tokens": PROBE_MAX_TOKENS}
    )
    model = LiteLLMModel(probe_settings, LLMSettings(retries=0, timeout=llm.timeout), role, Meter())
    messages = [
        {"role": "system", "content": DOCTOR_SYSTEM},
        {"role": "user", "content": 'Call the `report` tool with {"status": "ok"}.'},
    ]
    speed = speeds.of(settings.model or "", settings.api_base)
    import_litellm()  # its import is no part of the server's latency
    started = time.perf_counter()
    try:
        reply = model.complete(messages, [REPORT_TOOL])
    except WikiskillError as exc:
        check.reachable, check.cause, check.failed = False, _cause(str(exc), role, settings), True
        return check
    check.reachable, check.latency_s = True, time.perf_counter() - started
    speed.add(reply.usage.prompt_tokens, reply.usage.completion_tokens, check.latency_s)
    calls = [call for call in reply.tool_calls if call.name == "report"]
    check.protocol = "none" if not calls else "text" if calls[0].id.startswith(TEXT_CALL_PREFIX) else "native"
    check.notes += reply.notes
    json_messages = [
        {"role": "system", "content": DOCTOR_SYSTEM},
        {"role": "user", "content": 'Reply with the JSON object {"status": "ok"} and nothing else.'},
    ]
    try:
        started = time.perf_counter()
        answer = model.complete(json_messages, response_model=ProbeAnswer)
        speed.add(answer.usage.prompt_tokens, answer.usage.completion_tokens, time.perf_counter() - started)
        ProbeAnswer.model_validate(extract_json(answer.content))
        check.json_ok = True
        check.notes += answer.notes
    except (ValueError, WikiskillError) as exc:  # pydantic.ValidationError is a ValueError
        check.json_ok = False
        check.notes.append(" ".join(str(exc).split())[:200])
    check.context_window = model.context_window
    check.price_known = model.price_known()
    return check


def _cause(error: str, role: Role, settings: RoleSettings) -> str:
    """A model call's error without what the problem line says already (the role, the model,
    the server) and without litellm's repeats of the exception's name."""
    text = " ".join(error.split())
    for prefix in (f"{role} model {settings.model} at {settings.api_base}: ", f"{role} model {settings.model}: "):
        text = text.removeprefix(prefix)
    name, _, rest = text.partition(": ")
    while rest.startswith((f"litellm.{name}: ", f"{name}: ")):
        rest = rest.partition(": ")[2]
    return f"{name}: {rest}" if rest else text
