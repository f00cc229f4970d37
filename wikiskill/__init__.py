"""wikiskill: evolve an LLM agent's skills from its own experience, with git as the audit trail."""

__version__ = "0.1.0"
