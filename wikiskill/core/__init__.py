"""Foundation: the errors a user can cause, the settings of wikiskill.yaml as typed
models, the registry of each kind of replaceable part (`registry`, `parts`), the data
folders shipped with the package and the prompt templates in them, the
redaction of secrets, and child processes that die with their parent. It may import nothing of
wikiskill; every other package may import it."""
