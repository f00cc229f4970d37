"""Running tasks: the `team` that builds the roles from the config, the task runner, and the
executors that place tasks on this event loop, a pool of processes or Ray workers (`executors/`,
one module per kind). It may import every layer below it (`core` to `protocols.py`)."""
