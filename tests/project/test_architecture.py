"""The layers of docs/architecture.md hold: every import in wikiskill/ runs down the layers, no
modules import each other in a circle, and every Protocol sits where the document allows. The
layer order and those places are read from the document, so it is the rule this test enforces."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "wikiskill"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


@dataclass(frozen=True)
class Import:
    importer: str
    line: int
    target: str


def layer_table() -> list[list[str]]:
    """Each row's first cell as its names (`core/`, `cli/`, `__main__.py`), lowest layer first."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [re.findall(r"`([^`]+)`", row.split("|")[1]) for row in rows]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str, table: list[list[str]]) -> int | None:
    """The row of `module`: the row naming its file (`protocols.py`, `llm/settings.py`), else the
    row naming its top folder; -1 for the package's own __init__ (the version), None when no row
    names it."""
    parts = module.split(".")
    if parts == ["wikiskill"]:
        return -1
    file = "/".join(parts[1:]) + ".py"
    first = parts[1]
    for index, names in enumerate(table):
        if file in names:
            return index
    for index, names in enumerate(table):
        if (len(parts) > 2 or (PACKAGE / first).is_dir()) and f"{first}/" in names:
            return index
    return None


def imports(known: dict[str, Path]) -> list[Import]:
    """Every import of a wikiskill module anywhere in a file: top level, in functions, under TYPE_CHECKING."""
    found: set[Import] = set()
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names
                ]
            else:
                continue
            for target in targets:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    found.add(Import(module, node.lineno, target))
    return sorted(found, key=lambda each: (each.importer, each.line, each.target))


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def protocol_places() -> list[str]:
    """The folders (`contracts/`) and modules (`llm/chat.py`) where a Protocol may be defined."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.strip().startswith("Protocols live in:"))
    return re.findall(r"`([^`]+)`", line.split(":", 1)[1])


def protocols_defined(path: Path) -> list[str]:
    """The classes in a file that list `Protocol` (bare or `typing.Protocol`) among their bases."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            names = {base.id if isinstance(base, ast.Name) else getattr(base, "attr", None) for base in node.bases}
            if "Protocol" in names:
                found.append(node.name)
    return found


def misplaced_protocols(package: Path, places: list[str]) -> list[str]:
    misplaced = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if (
            any(relative == place or relative.startswith(place) for place in places if place.endswith("/"))
            or relative in places
        ):
            continue
        misplaced += [f"{relative}: {name}" for name in protocols_defined(path)]
    return misplaced


def test_the_architecture_document_lists_every_layer_once():
    table = layer_table()
    names = [name for row in table for name in row]
    assert [row[0] for row in table][:3] == ["core/", "telemetry/", "benchmarks/"] and "cli/" in names
    assert len(names) == len(set(names))


def test_every_module_belongs_to_a_layer():
    table = layer_table()
    homeless = [module for module in modules() if layer_of(module, table) is None]
    assert not homeless, f"modules in no layer of docs/architecture.md: {homeless}"


def test_a_file_the_table_names_belongs_to_that_row_and_the_rest_of_its_folder_to_the_folders():
    table = layer_table()
    assert layer_of("wikiskill.llm.settings", table) == layer_of("wikiskill.core.config", table) == 0
    assert layer_of("wikiskill.llm.model", table) == layer_of("wikiskill.llm", table) > 0


def test_every_section_of_the_settings_sits_beside_its_part_in_the_lowest_layer():
    from pydantic import BaseModel

    from wikiskill.core.config import Config

    table = layer_table()

    def sections(model: type[BaseModel]) -> list[type[BaseModel]]:
        found = []
        for field in model.model_fields.values():
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
                found += [field.annotation, *sections(field.annotation)]
        return found

    misplaced = [
        f"{model.__name__} in {model.__module__}"
        for model in sections(Config)
        if model.__module__ == "wikiskill.core.config" or layer_of(model.__module__, table) != 0
    ]
    assert sections(Config) and not misplaced, misplaced


def test_every_package_says_what_it_owns_and_what_it_may_import():
    silent = []
    for path in PACKAGE.glob("*/__init__.py"):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if "may import" not in " ".join(docstring.split()):
            silent.append(path.parent.name)
    assert not silent, f"packages whose __init__ docstring does not say what they may import: {silent}"


def test_no_module_imports_a_layer_above_its_own():
    table = layer_table()
    known = modules()
    upward = []
    for found in imports(known):
        mine, theirs = layer_of(found.importer, table), layer_of(found.target, table)
        if mine is not None and theirs is not None and theirs > mine:
            where = known[found.importer].relative_to(ROOT)
            upward.append(
                f"{where}:{found.line} imports {found.target} "
                f"({'/'.join(table[mine])} is below {'/'.join(table[theirs])})"
            )
    assert not upward, "imports running up the layers of docs/architecture.md:\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle():
    edges: dict[str, set[str]] = {}
    for found in imports(modules()):
        edges.setdefault(found.importer, set()).add(found.target)
    found = circles(edges)
    assert not found, "modules that import each other, directly or through others:\n" + "\n".join(
        " <-> ".join(group) for group in found
    )


def test_every_protocol_is_defined_where_the_architecture_document_allows():
    places = protocol_places()
    assert "contracts/" in places and all((PACKAGE / place).exists() for place in places), places
    misplaced = misplaced_protocols(PACKAGE, places)
    assert not misplaced, "Protocols outside the places docs/architecture.md allows:\n" + "\n".join(misplaced)


def test_the_protocol_finder_finds_a_protocol_planted_in_a_role(tmp_path):
    package = tmp_path / "wikiskill"
    (package / "roles").mkdir(parents=True)
    (package / "roles" / "agent.py").write_text(
        "import typing\nclass Runs(typing.Protocol): ...\nclass Plain: ...\n", encoding="utf-8"
    )
    (package / "contracts").mkdir()
    (package / "contracts" / "roles.py").write_text(
        "from typing import Protocol\nclass TaskAgent(Protocol): ...\n", encoding="utf-8"
    )
    assert misplaced_protocols(package, ["contracts/"]) == ["roles/agent.py: Runs"]


def test_the_circle_finder_finds_a_circle_through_three_modules():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_only_the_llm_backend_imports_litellm_and_only_inside_a_function():
    """litellm's import costs seconds, which `status`, `log` and `prompt` must never pay: one
    module imports it, when a model is first called."""
    importers, eager = set(), []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_functions = {
            id(node)
            for function in ast.walk(tree)
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(function)
        }
        for node in ast.walk(tree):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            if any(name == "litellm" or name.startswith("litellm.") for name in names):
                importers.add(module)
                if id(node) not in in_functions:
                    eager.append(f"{module}:{node.lineno}")
    assert importers == {"wikiskill.llm.backend"} and not eager, (importers, eager)


def built_in_names_restated(package: Path, kinds) -> list[str]:
    """Where a module other than core/parts.py writes a built-in's name again: as the attribute a
    kind reads a part's name from (`name = "strict"`), or as two or more of one kind's built-ins
    among a class's attributes (an enum of them) or a table's keys."""
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative == "core/parts.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for kind in kinds:
                names = set(kind.builtins)
                if isinstance(node, ast.ClassDef):
                    values = {}
                    for statement in node.body:
                        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
                        targets = (
                            statement.targets
                            if isinstance(statement, ast.Assign)
                            else [statement.target]
                            if isinstance(statement, ast.AnnAssign)
                            else []
                        )
                        if isinstance(value, ast.Constant) and value.value in names:
                            values[value.value] = [getattr(target, "id", None) for target in targets]
                    named = [name for name, targets in values.items() if kind.named_by in targets]
                    if len(values) >= 2 or named:
                        found.append(f"{relative}:{node.lineno}: {node.name} names {sorted(values)}")
                if isinstance(node, ast.Dict):
                    keys = {key.value for key in node.keys if isinstance(key, ast.Constant)} & names
                    if len(keys) >= 2:
                        found.append(f"{relative}:{node.lineno}: a table of {sorted(keys)}")
    return found


def test_every_built_in_part_is_named_once_in_its_registry():
    from wikiskill.registries import REGISTRIES

    restated = built_in_names_restated(PACKAGE, [registry.kind for registry in REGISTRIES])
    assert not restated, "built-in names written outside core/parts.py:\n" + "\n".join(restated)


def test_a_planted_enum_of_built_in_names_is_found(tmp_path):
    from wikiskill.core.parts import GATE_POLICY

    package = tmp_path / "wikiskill"
    (package / "core").mkdir(parents=True)
    (package / "core" / "config.py").write_text(
        "class GatePolicyName(StrEnum):\n    STRICT = 'strict'\n    PAIRED = 'paired'\n\n\n"
        "class Step(StrEnum):\n    CONFIRM = 'confirm'\n\n\nclass Mine:\n    name = 'sequential'\n",
        encoding="utf-8",
    )
    (package / "core" / "parts.py").write_text("TABLE = {'strict': 1, 'paired': 2}\n", encoding="utf-8")
    assert built_in_names_restated(package, [GATE_POLICY]) == [
        "core/config.py:1: GatePolicyName names ['paired', 'strict']",
        "core/config.py:10: Mine names ['sequential']",
    ]


def policy_names_compared(package: Path, names: set[str], own: frozenset[str] = frozenset()) -> list[str]:
    """Where a module other than core/parts.py (and the parts' `own` modules) asks for a gate policy
    by its name: the name in a comparison (`policy == "strict"`, `policy in {...}`), as a fallback
    (`policy or "sequential"`) or in a set of names; a policy says what it is on its class instead."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative == "core/parts.py" or relative in own:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.BoolOp):
                operands = node.values
            elif isinstance(node, ast.Set):
                operands = [node]
            else:
                continue
            named = {
                inner.value
                for operand in operands
                for inner in ast.walk(operand)
                if isinstance(inner, ast.Constant) and inner.value in names
            }
            if named:
                found.append((relative, node.lineno, ", ".join(sorted(named))))
    return [f"{relative}:{line}: {named}" for relative, line, named in sorted(found)]


def test_no_gate_policy_is_asked_for_by_its_name():
    from wikiskill.core.parts import GATE_POLICY

    compared = policy_names_compared(PACKAGE, set(GATE_POLICY.builtins))
    assert not compared, "gate policies compared by name:\n" + "\n".join(compared)


def runner_names() -> tuple[set[str], frozenset[str]]:
    """The names `agent.runner` takes (the kinds of runner, the CLI presets, the reference agents),
    less those that are also an agent setting (`command` is `agent.command` too, which a runner
    lists among its own settings), and the modules of the classes they name."""
    from wikiskill.core.parts import CLI_PRESET, REFERENCE_AGENT, TASK_RUNNER
    from wikiskill.roles.settings import AgentSettings

    kinds = (TASK_RUNNER, CLI_PRESET, REFERENCE_AGENT)
    names = {name for kind in kinds for name in kind.builtins} - set(AgentSettings.model_fields)
    modules = {path.partition(":")[0] for kind in kinds for path in kind.builtins.values()}
    return names, frozenset(f"{module.removeprefix('wikiskill.').replace('.', '/')}.py" for module in modules)


def test_no_runner_is_asked_for_by_its_name_outside_its_own_module():
    names, own = runner_names()
    compared = policy_names_compared(PACKAGE, names, own)
    assert not compared, "runners compared by name:\n" + "\n".join(compared)


def test_a_planted_comparison_of_runner_names_is_found(tmp_path):
    names, own = runner_names()
    package = tmp_path / "wikiskill"
    for relative, text in {
        "run/team.py": "if agent.runner == 'builtin':\n    pass\ncli = runner in ('qwen-code', 'codex')\n",
        "roles/runners/cli.py": "found = value == 'codex'\n",
    }.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text, encoding="utf-8")
    assert policy_names_compared(package, names, own) == ["run/team.py:1: builtin", "run/team.py:3: codex, qwen-code"]


def test_a_planted_comparison_of_policy_names_is_found(tmp_path):
    package = tmp_path / "wikiskill"
    (package / "loop").mkdir(parents=True)
    (package / "loop" / "cost.py").write_text(
        "LEVELLESS = frozenset({'strict', 'confirm'})\n"
        "if settings.policy == 'no_regression':\n    pass\n"
        "policy = meta.policy or 'sequential'\n"
        "plain = {'strict': 1}\n",
        encoding="utf-8",
    )
    assert policy_names_compared(package, {"strict", "confirm", "no_regression", "sequential"}) == [
        "loop/cost.py:1: confirm, strict",
        "loop/cost.py:2: no_regression",
        "loop/cost.py:4: sequential",
    ]
