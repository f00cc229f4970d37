"""The share of wikiskill's modules with a test file at their own path: `wikiskill/a/b.py` is
mirrored by `tests/a/test_b.py` (every module but the packages' `__init__.py`). `--missing` lists
the modules without one."""

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mirror(module: Path) -> Path:
    """The test file at `module`'s own path."""
    relative = module.relative_to(ROOT / "wikiskill")
    return ROOT / "tests" / relative.parent / f"test_{relative.name}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--missing", action="store_true", help="list the modules without a mirrored test")
    args = parser.parse_args()
    modules = sorted(p for p in (ROOT / "wikiskill").rglob("*.py") if p.name != "__init__.py")
    missing = [m for m in modules if not mirror(m).exists()]
    mirrored = len(modules) - len(missing)
    print(f"{mirrored} of {len(modules)} modules have a test at their own path ({mirrored / len(modules):.0%})")
    if args.missing:
        for module in missing:
            print(f"  {module.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
