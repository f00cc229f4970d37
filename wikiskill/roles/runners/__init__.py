"""The kinds of task-agent runner (`agent.runner`), one module each, each registered in
`core/parts.py` TASK_RUNNER and following `contracts.runners.TaskRunner`: wikiskill's own agents
(`builtin`), the user's callable (`python`), a coding-agent CLI preset (`cli`) and the agents that
check a suite of containers (`reference`)."""
