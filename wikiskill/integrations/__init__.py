"""wikiskill and other agents: accepted skills served to a host agent (`host`, MCP),
exported as plain skill folders, searched from outside (`lookup`), real agent sessions ingested
as trajectories or drafted into task folders (`session_tasks`), and hand edits watched and
linted, and the experiment tracker (`tracking`, MLflow) the loop logs each round to after reading
it back from git. It may import every layer below it (`core` to `run`); it never drives the loop,
which reads what `ingest` wrote."""
