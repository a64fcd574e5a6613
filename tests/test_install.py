"""Installed copies of the package, in fresh virtual environments (spec: API-CHECKOUT, API-EXTRAS).

The wheel is built once from a copy of the checkout (with pip's build isolation: setuptools
comes from pip's cache or PyPI). Each environment is made with ``venv --without-pip`` and the
wheel installed into it with ``--no-deps`` by this interpreter's pip; its dependencies are the
already-installed distributions of the test environment, made visible through a ``.pth`` file:
all of them (the ``[all]`` install), or only the core requirements and what they require
(symbolic links to just those distributions' files), so no download is needed.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from prefixexec.extras import install_hint

from conftest import REPO

pytestmark = pytest.mark.slow

HEAVY = ("matplotlib", "pyarrow", "dask", "distributed", "pandas", "polars")


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a copy of the checkout (never writes into the checkout)."""
    root = tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".mypy_cache", "build")
    for name in ("prefixexec", "kernel", "adapters", "spec"):
        shutil.copytree(REPO / name, root / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, root / name)
    out = tmp_path_factory.mktemp("wheel")
    done = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            str(out),
            ".",
        ],
        root,
    )
    assert done.returncode == 0, done.stderr
    (found,) = out.glob("prefix_executability-*.whl")
    return found


def _venv(path: Path, wheel: Path, dependencies: Path) -> Path:
    """A fresh environment with the wheel installed (no dependencies) and ``dependencies`` on its path."""
    done = _run([sys.executable, "-m", "venv", "--without-pip", str(path)], path.parent)
    assert done.returncode == 0, done.stderr
    python = path / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], path)
    site = Path(purelib.stdout.strip())
    (site / "_prefixexec_test_dependencies.pth").write_text(f"{dependencies}\n", encoding="utf-8")
    done = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "--no-index",
            str(wheel),
        ],
        path,
    )
    assert done.returncode == 0, done.stderr
    return python


def _requirement_names(requirements: list[str] | None) -> list[str]:
    """Names of the unconditional requirements (no extra, no environment marker that fails)."""
    names = []
    for requirement in requirements or []:
        if "extra ==" in requirement:
            continue
        names.append(re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0])
    return names


def core_distributions(wheel_requirements: list[str]) -> set[str]:
    """The core requirements and everything they require, as installed here (transitively)."""
    todo = _requirement_names(wheel_requirements)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        todo.extend(_requirement_names(importlib.metadata.requires(name)))
    return seen


def _wheel_requirements(wheel: Path) -> list[str]:
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        text = z.read(name).decode("utf-8")
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def _stage(folder: Path, distributions: set[str]) -> Path:
    """Symbolic links to the installed files of just ``distributions`` (top-level entries)."""
    folder.mkdir()
    for name in sorted(distributions):
        dist = importlib.metadata.distribution(name)
        base = Path(str(dist.locate_file("")))
        for entry in {Path(str(f)).parts[0] for f in dist.files or []}:
            if entry in ("..", "bin") or (folder / entry).exists():
                continue
            if (base / entry).exists():
                (folder / entry).symlink_to(base / entry)
    return folder


def _records_file() -> Path:
    return REPO / "examples" / "demo.jsonl"


def _cli_score(python: Path, cwd: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return _run([str(python), "-m", "prefixexec", "score", "--json", "--bootstrap", "200", str(path)], cwd)


@pytest.mark.spec("API-CHECKOUT")
def test_non_editable_install_imports_from_the_checkout_root(wheel: Path, tmp_path: Path) -> None:
    everything = Path(sysconfig.get_paths()["purelib"])  # the [all] dependencies (and more)
    python = _venv(tmp_path / "venv", wheel, everything)
    probe = (
        "import prefixexec, prefixexec.kernel, prefixexec.adapters, prefixexec.vectors, prefixexec.cli;"
        "print(prefixexec.__file__); print(prefixexec.kernel.__file__); print(prefixexec.ter([3, 4], [2, 3]))"
    )
    # From the root the checkout's prefixexec/ shadows the installed copy: it must still work.
    here = _run([str(python), "-c", probe], REPO)
    assert here.returncode == 0, here.stderr
    lines = here.stdout.splitlines()
    assert lines[0] == str(REPO / "prefixexec" / "__init__.py")
    assert lines[1] == str(REPO / "kernel" / "__init__.py")
    assert lines[2] == "0"  # hand count: FED 2 <= T 3 and 3 <= 4: neither rollout executable
    # Elsewhere the installed copy is used, laid out as the wheel lays it out.
    away = _run([str(python), "-c", probe], tmp_path)
    assert away.returncode == 0, away.stderr
    assert "site-packages" in away.stdout.splitlines()[1]
    # python -m prefixexec from the root, and its output equals the test environment's.
    done = _cli_score(python, REPO, _records_file())
    assert done.returncode == 0, done.stderr
    ours = _run(
        [sys.executable, "-m", "prefixexec", "score", "--json", "--bootstrap", "200", str(_records_file())],
        REPO,
    )
    assert ours.returncode == 0, ours.stderr
    assert done.stdout == ours.stdout


@pytest.mark.spec("API-EXTRAS")
def test_core_install_scores_records_without_matplotlib_pyarrow_or_dask(wheel: Path, tmp_path: Path) -> None:
    core = core_distributions(_wheel_requirements(wheel))
    assert not {h for h in HEAVY if h in core}, core
    python = _venv(tmp_path / "venv", wheel, _stage(tmp_path / "core", core))
    for module in HEAVY:
        absent = _run([str(python), "-c", f"import {module}"], tmp_path)
        assert absent.returncode == 1 and "ModuleNotFoundError" in absent.stderr, module
    scored = _run(
        [
            str(python),
            "-c",
            f"import prefixexec; s = prefixexec.score([{str(_records_file())!r}], bootstrap=200);"
            "print(s.to_json(), end='')",
        ],
        tmp_path,
    )
    assert scored.returncode == 0, scored.stderr
    cli = _cli_score(python, tmp_path, _records_file())
    assert cli.returncode == 0, cli.stderr
    assert scored.stdout == cli.stdout
    # A command that needs an extra: one line naming the pip install, exit 2.
    out = tmp_path / "report"
    report = _run(
        [str(python), "-m", "prefixexec", "report", str(_records_file()), "--out", str(out)], tmp_path
    )
    assert report.returncode == 2, report.stderr
    assert report.stderr.count("\n") == 1 and report.stderr.startswith("prefixexec: error: "), report.stderr
    assert install_hint("report") in report.stderr
    parquet = _run(
        [
            str(python),
            "-m",
            "prefixexec",
            "convert",
            str(_records_file()),
            "--output",
            str(tmp_path / "o.parquet"),
        ],
        tmp_path,
    )
    assert parquet.returncode == 2 and install_hint("parquet") in parquet.stderr, parquet.stderr
    assert parquet.stderr.count("\n") == 1
    for extra, args in (
        ("dask", ["score", "--engine", "dask", str(_records_file())]),
        ("parquet", ["score", "--rollouts", str(tmp_path / "r.parquet"), str(_records_file())]),
    ):
        done = _run([str(python), "-m", "prefixexec", *args], tmp_path)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.count("\n") == 1 and install_hint(extra) in done.stderr
    frame = _run(
        [
            str(python),
            "-c",
            f"import prefixexec; prefixexec.score([{str(_records_file())!r}], bootstrap=0).to_pandas()",
        ],
        tmp_path,
    )
    assert frame.returncode == 1 and install_hint("pandas") in frame.stderr, frame.stderr


@pytest.mark.spec("INSP-SCORER-REGISTRY")
def test_the_inspect_plugin_from_a_wheel_has_its_documented_names(wheel: Path, tmp_path: Path) -> None:
    """README's ``inspect score LOG --scorer prefixexec/prefix_executability`` after a normal
    (non-editable) install: inspect prefixes an installed package's names with the package name,
    which once made it ``prefixexec/prefixexec/prefix_executability`` there (issue 25)."""
    everything = Path(sysconfig.get_paths()["purelib"])  # inspect_ai and the [all] dependencies
    python = _venv(tmp_path / "venv", wheel, everything)
    probe = (
        "import prefixexec.integrations._registry as r, prefixexec.integrations.inspect as m;"
        "from inspect_ai._util.registry import registry_info;"
        "print(m.__file__);"
        "print(*(registry_info(f).name for f in (m.prefix_executability, m.ter, m.pool, m.schema_approver)))"
    )
    names = _run([str(python), "-c", probe], tmp_path)
    assert names.returncode == 0, names.stderr
    where, registered = names.stdout.splitlines()
    assert "site-packages" in where  # the wheel's copy, not the checkout's
    assert registered.split() == [
        "prefixexec/prefix_executability", "prefixexec/ter", "prefixexec/pool", "prefixexec/schema_approver",
    ]  # fmt: skip
    log = REPO / "tests" / "data" / "inspect" / "tiny_tools.eval"

    def rescored(interpreter: str, out: Path) -> dict[str, float]:
        done = _run(
            [interpreter, "-m", "inspect_ai", "score", str(log), "--scorer",
             "prefixexec/prefix_executability", "-S", "success=outcome", "--action", "append",
             "--output-file", str(out), "--display", "none"],
            tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        from prefixexec.adapters.inspect_logs.reader import iter_log

        header = next(value for kind, _, value in iter_log(out) if kind == "eval")
        (added,) = [s for s in header["results"]["scores"] if s["name"] == "prefix_executability"]
        return {k: m["value"] for k, m in added["metrics"].items() if k != "rr"}  # rr is NaN here

    # The same command with the wheel's copy and with the test environment's (editable) one: the
    # name resolves in both, and the scores are the same.
    from_wheel = rescored(str(python), tmp_path / "wheel.eval")
    assert from_wheel == rescored(sys.executable, tmp_path / "editable.eval")
    assert set(from_wheel) == {"ter", "auc_pec", "mean_fed", "rr_eligible"}



@pytest.mark.spec("API-EXTRAS")
def test_the_wheel_the_docs_name_is_the_one_pip_builds(wheel: Path) -> None:
    # README.md and docs/install.md tell users to install dist/<this name> after `pip wheel`.
    for page in (REPO / "README.md", REPO / "docs" / "install.md"):
        named = set(
            re.findall(r"dist/(prefix_executability-[^\s\"\[]+\.whl)", page.read_text(encoding="utf-8"))
        )
        assert named == {wheel.name}, (page.name, named)


@pytest.mark.spec("API-CHECKOUT", "API-EXTRAS")
def test_the_wheel_holds_every_module_of_the_source_tree(wheel: Path) -> None:
    """Every .py file under prefixexec/, kernel/ and adapters/ is in the wheel, at its installed
    name (a package missing from pyproject's list left prefixexec.site out of the wheel, and
    `leaderboard --site` failed with ModuleNotFoundError only in an installed copy)."""
    import zipfile

    roots = {"prefixexec": "prefixexec", "kernel": "prefixexec/kernel", "adapters": "prefixexec/adapters"}
    expected = {
        f"{installed}/{path.relative_to(REPO / source).as_posix()}"
        for source, installed in roots.items()
        for path in (REPO / source).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert len(expected) > 150  # the three source folders were found
    with zipfile.ZipFile(wheel) as archive:
        held = {name for name in archive.namelist() if name.endswith(".py")}
    assert sorted(expected - held) == []


@pytest.mark.spec("GUARD-PROXY", "GUARD-TRACE-SAME")
def test_the_guard_from_a_wheel_blocks_before_the_real_server(wheel: Path, tmp_path: Path) -> None:
    everything = Path(sysconfig.get_paths()["purelib"])  # mcp and mcp-server-sqlite of the test extra
    python = _venv(tmp_path / "venv", wheel, everything)
    server = [str(Path(sys.executable).parent / "mcp-server-sqlite"), "--db-path", str(tmp_path / "d.db")]
    trace = tmp_path / "trace.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    guard = subprocess.Popen(
        [str(python), "-m", "prefixexec", "guard", "--trace", str(trace), "--", *server],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert guard.stdin is not None and guard.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_tables"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "drop_all", "arguments": {}}},
    ]
    answers = []
    for message in messages:
        guard.stdin.write(json.dumps(message).encode() + b"\n")
        guard.stdin.flush()
        if "id" in message:
            answers.append(json.loads(guard.stdout.readline()))
    guard.stdin.close()
    assert guard.wait(60) == 0
    guard.stdout.close()
    assert answers[1]["result"]["isError"] is False
    assert answers[2]["result"]["isError"] is True
    said = answers[2]["result"]["content"][0]["text"]
    assert said.startswith("blocked by prefixexec guard: GUARD-TOOL (schema)")
    done = _run(
        [str(python), "-m", "prefixexec", "explain", "--adapter", "otel", "--success-attr", "@ok", "--json",
         str(trace)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert (row["T"], row["fed"], row["label"]) == (2, 2, "schema")  # by hand: the second call was blocked


def _trace_cases(folder: Path) -> list[tuple[str, str, list[Path], list[str], dict[str, tuple[Any, ...]]]]:
    """Every trace format: (what, adapter, files, options, scenario -> (T, FED, label, success)).

    The expected rows are the hand tables of tests/test_traces_real.py, test_traces_otlp.py and
    test_traces_formats.py, checked here again against those modules' independent counts of the
    raw files (plain ``json`` or the proto classes, no adapter code)."""
    import test_traces_formats as formats
    import test_traces_otlp as otlp
    import test_traces_real as real
    import zstandard

    real_rows = {s: row[:4] for s, row in real.SCENARIOS.items()}
    otlp_rows = {s: row[:4] for s, row in otlp.SCENARIOS.items()}
    for name, (_, _, how) in real.FILES.items():
        assert real.raw_counts(real.DATA / name, how) == {
            s: (r[4], r[5], r[3]) for s, r in real.SCENARIOS.items()
        }
    for name in otlp.FILES:
        assert otlp.raw_counts(otlp.DATA / name) == {s: (r[4], r[5], r[3]) for s, r in otlp.SCENARIOS.items()}
    for adapter in ("mlflow", "atif"):
        calls = formats.CALLS[adapter]
        assert formats.raw_counts(adapter) == {s: (*calls[s], r[3]) for s, r in formats.SCENARIOS.items()}
    zst = folder / "genai-stream.pb.zst"  # a zstd-compressed protobuf stream, made here
    zst.write_bytes(zstandard.ZstdCompressor().compress((otlp.DATA / "genai-stream.pb").read_bytes()))
    # the real OpenInference spans as a protobuf stream, converted by the library's json_format
    oi_stream = folder / "openinference-stream.pb"
    otlp._as_protobuf(real.DATA / "agents-openinference.jsonl", folder / "openinference.pb", oi_stream)
    return [
        ("OTLP JSON Lines", "otel", [real.DATA / "agents-otel-genai.jsonl"], [], real_rows),
        ("OTLP JSON document, pretty", "otel", [otlp.DATA / "genai-pretty.json"], [], otlp_rows),
        ("OTLP JSON document, compact, gzip", "otel", [otlp.DATA / "genai-compact.json.gz"], [], otlp_rows),
        ("OTLP protobuf, one request", "otel", [otlp.DATA / "genai.pb"], [], otlp_rows),
        ("OTLP protobuf, length-delimited stream", "otel", [otlp.DATA / "genai-stream.pb"], [], otlp_rows),
        ("OTLP protobuf stream, zstd", "otel", [zst], [], otlp_rows),
        ("MLflow Trace.to_json()", "mlflow", [formats.MLFLOW / "mlflow-traces.jsonl"], [], formats.SCENARIOS),
        ("ATIF trajectories", "atif", sorted(formats.ATIF.glob("atif-*.json")), [], formats.SCENARIOS),
        ("OpenAI Agents SDK export", "agents", [real.DATA / "agents-sdk.jsonl"], [], real_rows),
        (
            "LangSmith runs",
            "langsmith",
            [real.DATA / "langgraph-langsmith.jsonl"],
            ["--task-attr", "scenario"],
            real_rows,
        ),
        (
            "OpenInference (Agents SDK)",
            "openinference",
            [real.DATA / "agents-openinference.jsonl"],
            [],
            real_rows,
        ),
        (
            "OpenInference (LangGraph)",
            "openinference",
            [real.DATA / "langgraph-openinference.jsonl"],
            [],
            real_rows,
        ),
        ("OpenInference, OTLP protobuf stream", "openinference", [oi_stream], [], real_rows),
    ]


@pytest.mark.spec(
    "TRACE-REAL", "DETECT-TRACES", "TRACE-OTLP-FORMS", "TRACE-OTLP-PROTOBUF", "INPUT-COMPRESSED"
)
def test_every_trace_format_from_a_wheel_is_detected_and_scored_as_the_counts_say(
    wheel: Path, tmp_path: Path
) -> None:
    # issue 39: each format, detected (no --adapter) and scored by the installed copy of a built
    # wheel in a fresh environment with the [all] dependencies ([otlp] among them)
    everything = Path(sysconfig.get_paths()["purelib"])
    python = _venv(tmp_path / "venv", wheel, everything)
    work = tmp_path / "work"
    work.mkdir()
    where = _run([str(python), "-c", "import prefixexec; print(prefixexec.__file__)"], work)
    assert where.returncode == 0 and "site-packages" in where.stdout, where.stderr
    cases = _trace_cases(work)
    assert {adapter for _, adapter, *_ in cases} == {
        "otel",
        "mlflow",
        "atif",
        "agents",
        "langsmith",
        "openinference",
    }
    for number, (what, adapter, files, options, expected) in enumerate(cases):
        rows = work / f"rows-{number}.jsonl"
        argv = ["-m", "prefixexec", "score", "--quiet", "--bootstrap", "0", "--rollouts", str(rows), *options]
        done = _run([str(python), *argv, *map(str, files)], work)
        assert done.returncode == 0, (what, done.stderr)
        # the signature line names the adapter detection chose (and its options)
        assert re.search(rf"\|adapter:{adapter}[|\[]", done.stdout), (what, done.stdout)
        found = [json.loads(line) for line in rows.read_text(encoding="utf-8").splitlines()]
        assert {r["dataset"] for r in found} == {adapter}, what
        assert {r["task_id"]: (r["T"], r["fed"], r["label"], r["success"]) for r in found} == expected, what
