"""Running tasks: the task runner with its per-task result cache, and the executors
that place tasks on this event loop, a pool of processes or Ray workers (`executors/`, one module
per kind). It may import every layer below it (`core` to `roles`)."""
