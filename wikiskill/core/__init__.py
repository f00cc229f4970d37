"""Foundation: the errors a user can cause, wikiskill.yaml's top level (`config`), which assembles
the sections each part declares in a `settings` module beside it, each kind of replaceable part by
name (`parts`) and the generic `registry` that loads one as the class of a contract it is handed,
the data folders shipped with the package and the prompt templates in them, the redaction of
secrets, and child processes that die with their parent. It may import nothing of wikiskill but
those `settings` modules, which are in its layer and import only it; every other package may
import it."""
