"""The publish context: how a step writes. Each step counts its cost from `begin_step` and
publishes one commit whose trailers carry that cost (per role too); a person's symbolic link in
wiki/ or skills/ is never replaced or written through. Tags and branches move only here."""

from __future__ import annotations

from collections.abc import Mapping

from ..knowledge.lint import LINTED
from ..llm.meter import Meter
from ..roles.settings import Role
from ..store.traces import Usage
from ..store.trailers import Trailers, format_message, role_cached_key, role_keys
from ..store.workspace import MAIN, Workspace
from ..telemetry.spans import annotate

TRACED_TRAILERS = ("decision", "action", "skill", "score", "incumbent", "fingerprint", "policy", "cost_usd", "tokens")
"""The trailers of a step's commit that its span carries too."""


class Publisher:
    def __init__(self, ws: Workspace, meter: Meter):
        self.ws = ws
        self.meter = meter
        self._step_start = Usage()
        self._step_roles: dict[Role, Usage] = {}

    def begin_step(self) -> None:
        """Start counting the cost of a step (its commit carries what was spent since)."""
        self._step_start = self.meter.total
        self._step_roles = self.meter.snapshot()

    def commit(
        self,
        subject: str,
        trailers: Trailers,
        changes: Mapping[str, str | None] | None = None,
        body: str = "",
        branch: str = MAIN,
        base: str | None = None,
        extra_parents: tuple[str, ...] = (),
    ) -> str:
        total = self.meter.total
        costed = trailers.model_copy(
            update={
                "cost_usd": total.cost_usd - self._step_start.cost_usd,
                "tokens": total.tokens - self._step_start.tokens,
            }
        )
        for key, value in self._role_trailers().items():
            setattr(costed, key, value)
        written, linked = self._leave_links_alone(dict(changes or {}), base or self.ws.head(branch))
        if linked:
            body = "\n".join(
                filter(None, [body, *(f"- left alone, not written: {path} is a symbolic link" for path in linked)])
            )
        message = format_message(subject, costed, body)
        annotate(**{key: getattr(costed, key) for key in TRACED_TRAILERS})
        return self.ws.commit(written, message, branch=branch, base=base, extra_parents=extra_parents)

    def tag(self, name: str, sha: str) -> None:
        """Point tag `name` at `sha`, wherever it pointed before."""
        self.ws.tag(name, sha, force=True)

    def create_branch(self, branch: str, start: str) -> None:
        self.ws.create_branch(branch, start)

    def delete_branch(self, branch: str) -> None:
        self.ws.delete_branch(branch)

    def _leave_links_alone(
        self, changes: dict[str, str | None], ref: str | None
    ) -> tuple[dict[str, str | None], list[str]]:
        """`changes` without those to a symbolic link in wiki/ or skills/ (or to a path through
        one): a person's link is never replaced, and what it points at is never written."""
        links = {path for folder in LINTED for path in self.ws.links(ref, folder)} if ref else set()
        if not links:
            return changes, []
        linked = sorted(path for path in changes if any(path == link or path.startswith(f"{link}/") for link in links))
        return {path: text for path, text in changes.items() if path not in linked}, linked

    def _role_trailers(self) -> dict[str, str]:
        """`Cost-<Role>-USD` and `Tokens-<Role>` of each role that made calls in this step, and
        `Cached-<Role>` where its provider read prompt tokens from its cache."""
        trailers = {}
        for role, usage in sorted(self.meter.snapshot().items()):
            before = self._step_roles.get(role, Usage())
            if usage.calls > before.calls:
                cost, tokens = role_keys(role)
                trailers[cost] = f"{usage.cost_usd - before.cost_usd:.6f}"
                trailers[tokens] = str(usage.tokens - before.tokens)
                if usage.cached_tokens > before.cached_tokens:
                    trailers[role_cached_key(role)] = str(usage.cached_tokens - before.cached_tokens)
        return trailers
