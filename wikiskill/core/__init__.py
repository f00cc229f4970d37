"""Foundation: the errors a user can cause, the settings of wikiskill.yaml as typed models, each
kind of replaceable part by name (`parts`) and the generic `registry` that loads one as the class
of a contract it is handed, the data folders shipped with the package and the prompt templates in
them, the redaction of secrets, and child processes that die with their parent. It may import
nothing of wikiskill; every other package may import it."""
