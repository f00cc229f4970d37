"""The roles: the task agent (interactive, QA and tool-use), the wiki maintainer, the
skill proposer, their offline no-LLM counterparts (`offline/`), what they may read (`sandbox`,
the agent's `read_wiki` tool) and their transcripts (`run/team.py` builds them). Each returns
results or edits; none writes to git or the filesystem (the sandbox reads files at a git ref). It
may import `core`, `benchmarks`, `store`, `knowledge` and `llm`."""
