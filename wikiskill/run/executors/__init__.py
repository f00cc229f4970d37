"""Where a command's tasks run (config `executor`): one class per kind, each following
`contracts.running.Executor`, registered by name in `core.parts.EXECUTOR`.

Whatever the kind, the command owns the results: it answers cached tasks itself, starts a task
only while the budget allows, writes each result to the cache as it arrives and keeps the cost
ledger. Workers get small picklable recipes and hand back outcomes. Their section of
wikiskill.yaml, the Ray cluster's, is `settings`, in core's layer.
"""
