"""The README is a true entry point: its test command is what CI runs, every link in it and in
docs/ leads to a page and heading that exist, and what the references list (settings, commands)
is documented in the code they are generated from."""

import ast
import re
from pathlib import Path

from pydantic import BaseModel
from typer.main import get_command

from wikiskill.cli import app
from wikiskill.core.config import Config
from wikiskill.roles.coding_agents.presets import npm_packages
from wikiskill.store.traces import Trajectory

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def settings(model: type[BaseModel], prefix: str = ""):
    """Every setting and section of the config as (path, field)."""
    for name, field in model.model_fields.items():
        yield f"{prefix}{name}", field
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from settings(field.annotation, f"{prefix}{name}.")


def commands(group, prefix: str = "wikiskill"):
    for name, command in group.commands.items():
        yield f"{prefix} {name}", command
        if getattr(command, "commands", None):
            yield from commands(command, f"{prefix} {name}")


def prose(markdown: str) -> str:
    """The text outside code: fenced blocks and inline code spans hold no links."""
    markdown = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", markdown)


def anchors(page: Path) -> set[str]:
    """The heading ids GitHub gives a page's headings."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    return broken


def test_every_setting_has_a_description_in_the_code():
    paths = list(settings(Config))
    assert len(paths) > 50
    assert [path for path, field in paths if not (field.description or "").strip()] == []


def test_every_command_argument_and_option_has_help_text():
    group = get_command(app)
    found = list(commands(group))
    assert len(found) >= 20
    assert [path for path, command in found if not (command.help or "").strip()] == []
    undocumented = [
        f"{path} {param.name}"
        for path, command in [("wikiskill", group), *found]
        for param in command.params
        if not (param.help or "").strip()
    ]
    assert undocumented == []


def test_every_link_in_the_readme_and_docs_leads_to_a_page_and_heading_that_exist():
    assert len(PAGES) >= 10
    assert [problem for page in PAGES for problem in broken_links(page)] == []


def test_the_readme_links_every_page_of_docs():
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in LINK.findall(prose(README))}
    assert [str(page.relative_to(ROOT)) for page in DOCS.rglob("*.md") if page.resolve() not in linked] == []


def test_ci_runs_the_readme_test_command():
    test_command = (
        'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && '
        ".venv/bin/pip install --no-deps bfcl-eval==2026.3.23 && .venv/bin/python -m pytest -n auto"
    )
    assert test_command in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert '.venv/bin/pip install -q -e ".[test]"' in ci
    assert "CI=true .venv/bin/python -m pytest -n auto" in ci  # a test whose system program is missing fails there
    assert ".venv/bin/pip install -q --no-deps bfcl-eval==2026.3.23" in ci
    assert ci.index(".venv/bin/ruff check .") < ci.index("CI=true .venv/bin/python -m pytest")  # lint before tests


def test_the_quickstart_workspace_does_not_show_as_untracked_in_the_clone():
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    quickstart = re.search(r"wikiskill init (\S+) &&", README).group(1)
    assert Path(quickstart).is_absolute() or quickstart.startswith("..") or f"/{quickstart}/" in ignored


def test_the_concepts_page_names_every_field_of_a_val_jsonl_line():
    concepts = (DOCS / "concepts.md").read_text(encoding="utf-8")
    line = Trajectory(task_id="t", split="val", kind="qa", question="q").outcome()
    described = concepts[concepts.index("raw/rNNN/val.jsonl") : concepts.index("wiki/index.md")]
    assert [key for key in line if key not in described] == []
    assert "scores only" not in concepts


def packages_the_tests_need() -> set[str]:
    """The package of every system program a test runs: the constant `package=` of each `needs(...)`
    mark in tests/, the presets' npm packages where `needs_cli` marks a test, and docker.io for the
    `needs_docker` mark (the marks in test_needs.py's sample files are strings, not calls)."""
    found = set()
    for source in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name == "needs_docker":
                found.add("docker.io")
            if not isinstance(node, ast.Call):
                continue
            called = getattr(node.func, "id", None)
            if called == "needs_cli":
                found |= set(npm_packages())
            elif called == "needs":
                found |= {
                    keyword.value.value
                    for keyword in node.keywords
                    if keyword.arg == "package" and isinstance(keyword.value, ast.Constant)
                }
    return found


def test_the_readme_names_the_package_of_every_program_the_tests_run():
    needed = packages_the_tests_need()
    assert {"bubblewrap", "chromium", "openjdk-17-jre-headless", "docker.io", *npm_packages()} <= needed
    note = README[README.index("Install and run the tests") : README.index("Then look at what happened")]
    assert sorted(package for package in needed if f"`{package}`" not in note) == []
    agents = (DOCS / "agents.md").read_text(encoding="utf-8")
    assert [package for package in npm_packages() if f"npm install -g {package}" not in agents] == []
