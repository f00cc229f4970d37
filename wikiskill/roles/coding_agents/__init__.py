"""Coding-agent CLIs as the task agent (`agent.runner: qwen-code`, `claude-code`, `codex`,
`gemini-cli`, `command`): one `CliPreset` class per CLI (`contracts/coding_agent.py` states what a preset
must do, `core/parts.py` registers them),
the isolated folder each task runs in, and the parsers that turn a CLI's streamed transcript into
a trajectory."""
