"""The roles: the task agent (interactive, QA and tool-use, the user's own Python callable:
`python_agent`, or a coding-agent CLI run isolated: `coding_agents/`; the workdir agent with its one `bash`
tool: `shell_agent`, its commands run in a task environment (`environments/`), its first prompt's
`workdir_listing` and the `bash_block` protocol), the wiki maintainer, the skill
proposer, the `judge` of judged suites, the rubric drafter of `wikiskill tasks from-sessions`
(`rubric_drafter`), their offline no-LLM counterparts (`offline/`), what they may read
(`sandbox`, the agent's `read_wiki` tool) and their transcripts (`run/team.py` builds them). Each
returns results or edits; none writes to git or the workspace (the sandbox reads files at a git
ref; a Python or CLI runner's task gets a temporary folder of its own). It may import `core`,
`benchmarks`, `store`, `knowledge`, `llm` and the `contracts` it fulfils. The roles' sections of
wikiskill.yaml are `settings`, in core's layer."""
