"""Running tasks: the `team` that builds the roles from the config, the task runner, a workdir
suite's tasks played in fresh working directories (`workdir_tasks`) and scored there (`scorers`),
and the executors that place tasks on this event loop, a pool of processes or Ray workers
(`executors/`, one module per kind). It may import every layer below it (`core` to `roles`)."""
