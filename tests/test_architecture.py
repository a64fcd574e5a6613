"""The layout's promises: the kernel imports numpy and attrs only; adapters never import the CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

STDLIB = set(sys.stdlib_module_names)


def imported_modules(folder: Path) -> dict[str, set[str]]:
    """file -> the top-level names of every absolute import in it (relative imports excluded)."""
    found: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
        found[str(path.relative_to(REPO))] = names
    return found


@pytest.mark.spec("ARCH-KERNEL")
def test_kernel_imports_only_numpy_attrs_and_the_standard_library() -> None:
    bad = {
        f: sorted(n for n in names if n.split(".")[0] not in STDLIB | {"numpy", "attrs"})
        for f, names in imported_modules(REPO / "kernel").items()
    }
    assert not {f: n for f, n in bad.items() if n}, bad


@pytest.mark.spec("ARCH-KERNEL")
def test_adapters_do_not_import_the_command_line() -> None:
    offenders = {
        f: sorted(n for n in names if n.startswith(("prefixexec.cli", "prefixexec.commands")))
        for f, names in imported_modules(REPO / "adapters").items()
    }
    assert not {f: n for f, n in offenders.items() if n}, offenders


@pytest.mark.spec("ARCH-KERNEL")
def test_importing_the_kernel_loads_no_adapter_or_benchmark_package() -> None:
    code = (
        "import sys, prefixexec.kernel, prefixexec.kernel.bootstrap, prefixexec.kernel.accumulator;"
        "bad = [m for m in sys.modules if m.startswith(('prefixexec.adapters', 'prefixexec.cli',"
        " 'bfcl_eval', 'scipy', 'pyarrow', 'dask', 'matplotlib', 'jsonschema'))];"
        "print(','.join(sorted(bad)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
