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


#: Packages that the start-up paths must not load (heavy, or only needed by other commands).
HEAVY = ("prefixexec.adapters", "matplotlib", "pyarrow", "dask", "distributed", "jsonschema", "scipy")


def _loaded_after(code: str) -> list[str]:
    """The heavy modules (and importlib.metadata) loaded by ``code`` in a fresh interpreter."""
    probe = (
        f"{code}\n"
        "import sys\n"
        f"bad = [m for m in sys.modules if m.startswith({HEAVY!r}) or m == 'importlib.metadata']\n"
        "sys.stderr.write('LOADED:' + ','.join(sorted(bad)) + '\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED:")][-1]
    return [m for m in line[len("LOADED:") :].split(",") if m]


@pytest.mark.spec("ARCH-KERNEL")
def test_version_loads_neither_the_kernel_nor_any_heavy_package() -> None:
    code = (
        "from prefixexec.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit as exc:\n    assert exc.code == 0\n"
        "import sys\nassert 'numpy' not in sys.modules and 'prefixexec.kernel' not in sys.modules\n"
    )
    assert _loaded_after(code) == []


@pytest.mark.spec("ARCH-KERNEL")
def test_version_prints_what_argparse_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from prefixexec import __version__
    from prefixexec.cli import build_parser, main

    with pytest.raises(SystemExit) as fast:
        main(["--version"])
    quick = capsys.readouterr().out
    with pytest.raises(SystemExit) as full:
        build_parser().parse_args(["--version"])
    assert fast.value.code == full.value.code == 0
    assert quick == capsys.readouterr().out == f"prefixexec {__version__}\n"


@pytest.mark.spec("ARCH-KERNEL")
def test_importing_the_kernel_loads_no_heavy_package_nor_importlib_metadata() -> None:
    code = "import prefixexec.kernel, prefixexec.kernel.bootstrap, prefixexec.kernel.accumulator"
    assert _loaded_after(code) == []


@pytest.mark.spec("ARCH-KERNEL")
def test_scoring_records_loads_no_plotting_arrow_dask_or_metadata(tmp_path: Path) -> None:
    record = (
        '{"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": true, '
        '"outcome": {"T": 2, "fed": 3}}\n'
    )
    (tmp_path / "one.jsonl").write_text(record, encoding="utf-8")
    code = (
        "import contextlib, io\nfrom prefixexec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['score', {str(tmp_path / 'one.jsonl')!r}, '--bootstrap', '0']) == 0\n"
    )
    loaded = _loaded_after(code)
    # The adapters package itself is needed here; its other adapters are the lead's to make lazy.
    assert [m for m in loaded if not m.startswith(("prefixexec.adapters", "jsonschema"))] == []
