"""The skills block of a task agent's system prompt, in three modes.

- `full`: every SKILL.md body (the WikiSkill paper's default);
- `index`: an `<available_skills>` list of name, description and location; bodies are loaded
  on demand with the `load_skill` tool (Agent Skills' progressive disclosure);
- `retrieve`: the top-k skills most relevant to the task text, ranked with BM25 over name,
  description and When-to-Apply, within a token budget.
"""

from __future__ import annotations

from typing import Any

from ..core.prompts import render
from .search import rank, tokens
from .settings import SkillsMode, SkillsSettings
from .skills import Skill

LOAD_SKILL_TOOL_NAME = "load_skill"
LOAD_SKILL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": LOAD_SKILL_TOOL_NAME,
        "description": "Load the full instructions of one of the available skills by name.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name."}},
            "required": ["name"],
        },
    },
}


def render_skills(skills: list[Skill], settings: SkillsSettings, task: str = "") -> str:
    """The block to put into a system prompt; empty when there are no skills."""
    return render_block(shown_skills(skills, settings, task), settings)


def render_block(shown: list[Skill], settings: SkillsSettings) -> str:
    """The block for skills already chosen by `shown_skills` (so retrieval runs once per task)."""
    if not shown:
        return ""
    return render("skills_index" if settings.mode is SkillsMode.INDEX else "skills_full", skills=shown)


def shown_skills(skills: list[Skill], settings: SkillsSettings, task: str = "") -> list[Skill]:
    """The skills whose text the block carries up front (all of them, except in `retrieve`)."""
    if settings.mode is SkillsMode.RETRIEVE:
        return retrieve(skills, task, settings.top_k, settings.token_budget)
    return skills


def load_skill(skills: list[Skill], name: str) -> str:
    """What the `load_skill` tool returns to the agent."""
    for skill in skills:
        if skill.name == name:
            return skill.body
    names = ", ".join(skill.name for skill in skills) or "none"
    return f"No skill named {name!r}. Available: {names}."


def retrieve(skills: list[Skill], task: str, top_k: int, token_budget: int) -> list[Skill]:
    """The top-k skills for `task` by BM25, kept within `token_budget` (best first)."""
    corpus = [f"{s.name.replace('-', ' ')} {s.description} {s.section('When to Apply')}" for s in skills]
    ranked = [index for index, _ in sorted(rank(corpus, task), key=lambda item: (-item[1], skills[item[0]].name))]
    chosen: list[Skill] = []
    used = 0
    for index in ranked[:top_k]:
        cost = tokens(skills[index].body)
        if chosen and used + cost > token_budget:
            break
        chosen.append(skills[index])
        used += cost
    return chosen
