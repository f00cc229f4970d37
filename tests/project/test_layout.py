"""tests/ mirrors wikiskill/: every test file sits in the folder of the package it tests, so the
tests of a part are found beside each other and nowhere else. Two folders name no package:
e2e/ (whole-loop runs, kills and faults) and project/ (checks of the repository as a whole).
tests/ itself holds only conftest.py, the support modules and their data folders."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
BEYOND_THE_PACKAGE = ("e2e", "project")
DATA = ("fixtures", "golden", "sessions")
"""Files the tests read; a test_*.py in there is data, never collected."""


def collected_modules() -> list[Path]:
    return sorted(
        path
        for path in TESTS.rglob("test_*.py")
        if path.relative_to(TESTS).parts[0] not in DATA and "__pycache__" not in path.parts
    )


def mirrors_the_package(folder: Path) -> bool:
    parts = folder.relative_to(TESTS).parts
    return bool(parts) and (parts[0] in BEYOND_THE_PACKAGE or (ROOT / "wikiskill").joinpath(*parts).is_dir())


def test_every_test_file_sits_in_a_folder_that_names_a_package_of_wikiskill():
    misplaced = [str(path.relative_to(ROOT)) for path in collected_modules() if not mirrors_the_package(path.parent)]
    assert misplaced == [], (
        "move each into tests/<package>/ for the part of wikiskill/ it tests "
        f"(or tests/e2e/, tests/project/): {misplaced}"
    )


def test_no_two_test_files_share_a_name():
    """pytest imports a test file by its name (the default import mode), so a second file of the
    same name in another folder stops the whole run."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in collected_modules():
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
        seen.setdefault(path.name, path)
    assert clashes == [], f"name them for what they test: {clashes}"
