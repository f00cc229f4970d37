"""`skills.max_tokens`: a bound on the skills block every task prompt carries. A library only
grows unless something retires skills; past the bound a create (or a patch that grows it) is
refused before validation, so the proposer must retire one first (skills `uplift` showed no
value for are offered as candidates)."""

from __future__ import annotations

from collections.abc import Mapping

from .search import tokens
from .settings import SkillsSettings
from .skills import load_skills
from .skillsblock import render_skills


def library_tokens(files: Mapping[str, str], settings: SkillsSettings) -> int:
    """Tokens of the skills block the skills in `files` (paths relative to skills/) put in a prompt."""
    return tokens(render_skills(load_skills(dict(files)), settings))


def over_budget(
    main: Mapping[str, str], changes: Mapping[str, str | None], settings: SkillsSettings, retire: list[str]
) -> str | None:
    """Why a proposal that grows the library past `skills.max_tokens` is refused; None otherwise.
    `main`: main's skill files relative to skills/; `changes`: the proposal's, by workspace path."""
    if settings.max_tokens is None:
        return None
    ours = {path.removeprefix("skills/"): text for path, text in changes.items() if path.startswith("skills/")}
    after = {path: text for path, text in {**main, **ours}.items() if text is not None}
    before, grown = library_tokens(main, settings), library_tokens(after, settings)
    if grown <= settings.max_tokens or grown <= before:
        return None
    offer = f" (no value shown by uplift: {', '.join(retire)})" if retire else ""
    return (
        f"the skills block would grow to {grown} tokens, past skills.max_tokens {settings.max_tokens}: "
        f"retire a skill first{offer}"
    )
