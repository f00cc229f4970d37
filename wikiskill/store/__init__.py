"""The workspace on disk: the git repository (reads, commits, the working tree kept in step with
main, the writers' lock), the typed trailers of every commit, the records kept in it
(trajectories, evaluations, the state of each round, the candidates waiting for review) and its
wikiskill.yaml (`settings`, which also sets `skills.locked`). The
only package that talks to git. It may import `core` and `benchmarks` (a trajectory names its
suite's kind; reading the settings checks the benchmark they name); it knows nothing of what
skills and pages say, of models or of the loop."""
