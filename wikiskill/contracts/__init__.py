"""The contracts: what each replaceable part must do and the values parts hand each other, stated
once, below the parts that fulfil them, so a role, an executor or a gate policy imports the
contract it implements (`roles`, `running`, `gate`, `coding_agent`, `integrations`) and the
`transcript` a role returns. Beside each contract of a kind of part a setting picks is the kind's
`Registry` (`gate.GATE_POLICIES`), which loads a part as the class of its contract.
`wikiskill.protocols` names them all in one import for plugins. It may import `core`, `benchmarks`,
`store`, `knowledge` and `llm`."""
