"""Read spec IDs from spec/*.md and the IDs that tests cite (shared by the coverage tests)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SPEC_DIR = REPO / "spec"
TESTS_DIR = REPO / "tests"

ID_HEADING = re.compile(r"^### ([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+) — ", re.M)


def spec_files() -> list[Path]:
    """SPEC.md and every adapter or protocol spec beside it."""
    return sorted(SPEC_DIR.rglob("*.md"))


def spec_ids() -> dict[str, Path]:
    """Every ``### ID — title`` heading of the spec, with the file that defines it."""
    found: dict[str, Path] = {}
    for path in spec_files():
        for match in ID_HEADING.finditer(path.read_text(encoding="utf-8")):
            ident = match.group(1)
            if ident in found:
                raise AssertionError(f"spec ID {ident} defined twice: {found[ident]} and {path}")
            found[ident] = path
    return found


def cited_ids() -> dict[str, list[str]]:
    """ID -> tests (``file::function``) that cite it with ``@pytest.mark.spec(...)``."""
    cited: dict[str, list[str]] = {}
    for path in sorted(TESTS_DIR.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.ClassDef):
                continue
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Attribute)
                    and deco.func.attr == "spec"
                ):
                    for arg in deco.args:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                            cited.setdefault(arg.value, []).append(f"{path.name}::{node.name}")
    return cited
