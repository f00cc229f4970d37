"""Coding-agent CLIs as the task agent (`agent.runner: qwen-code`, `claude-code`, `codex`,
`gemini-cli`, `command`): one `CliPreset` class per CLI (`base.py` states what a preset must do),
the isolated folder each task runs in, and the parsers that turn a CLI's streamed transcript into
a trajectory."""
