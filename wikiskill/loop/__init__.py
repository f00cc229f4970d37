"""The evolution loop: `evolve` runs rounds of the steps in `steps/` (one class per
step, resumable from git), over the `harness` that every step shares; the gate's policies, the
evaluation fingerprint, trace sampling, skill impact and usage, a round's spend estimate,
progress bars and the progress file a running evolve keeps for other processes, and a person's
decisions (`review`: accept or reject a pending candidate, lock a skill). It may import
every layer below it (`core` to `integrations`). Its sections of wikiskill.yaml (`gate`,
`sampling`) are `settings`, in core's layer."""
