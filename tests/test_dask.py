"""`score --engine dask`: units mapped to accumulators on a cluster and merged (DASK-ENGINE)."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prefixexec.adapters import AdapterOptions, parquet
from prefixexec.adapters.parquet import Unit
from prefixexec.cli import main
from prefixexec.engine import Fault, accumulate_input, merge_outcomes, run_unit, work_units
from prefixexec.kernel.accumulator import AccumulatorSet

pytestmark = pytest.mark.slow


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def records(n_tasks: int = 12, trials: int = 3, seed: int = 4) -> list[dict[str, Any]]:
    """3 methods x n_tasks x trials outcome records (seeded), labels included."""
    rng = random.Random(seed)
    labels = [None, "schema", "dependency", "precondition", "state_consistency", "information"]
    out = []
    for method in ("react", "plan", "dual-loop"):
        for task in range(n_tasks):
            for trial in range(trials):
                T = rng.randint(1, 7)
                fed = rng.randint(1, T + 1)
                outcome: dict[str, Any] = {"T": T, "fed": fed}
                label = None if fed == T + 1 else rng.choice(labels)
                if label is not None:
                    outcome["label"] = label
                out.append(
                    {
                        "dataset": "d",
                        "model": "m",
                        "method": method,
                        "task_id": f"task{task:02d}",
                        "trial": trial,
                        "success": rng.random() < 0.6,
                        "outcome": outcome,
                    }
                )
    return out


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local cluster of 2 worker processes (one thread each) for the module's tests."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    ) as cluster:
        yield cluster.scheduler_address


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """The records as a Parquet file of row groups of 10 rows (108 rows: 11 row groups)."""
    source = write_jsonl(tmp_path / "all.jsonl", records())
    out = tmp_path / "all.parquet"
    assert main(["convert", str(source), "--output", str(out), "--row-group-rows", "10"]) == 0
    return out


@pytest.mark.spec("DASK-ENGINE", "ACC-MERGE", "STREAM-SCORE")
def test_row_group_units_give_byte_identical_output(
    table: Path, scheduler: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 25)  # units of 3 row groups: 30 rows each
    units = work_units("parquet", [str(table)])
    assert [u.row_groups for u in units] == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10)]
    assert [u.first_row for u in units] == [0, 30, 60, 90]
    for extra in (["--json"], ["--json", "--bootstrap", "0"], []):
        argv = ["score", *extra, "--adapter", "parquet", str(table)]
        code, local, _ = run(argv, capsys)
        assert code == 0
        code, distributed, err = run([*argv, "--engine", "dask", "--scheduler", scheduler], capsys)
        assert code == 0 and err == ""
        assert distributed == local


@pytest.mark.spec("DASK-ENGINE", "STREAM-SCORE")
def test_jsonl_files_are_units(tmp_path: Path, scheduler: str, capsys: pytest.CaptureFixture[str]) -> None:
    rows = records(n_tasks=10, trials=2)
    random.Random(3).shuffle(rows)
    files = [str(write_jsonl(tmp_path / f"part{i}.jsonl", rows[i::5])) for i in range(5)]
    code, local, _ = run(["score", "--json", *files], capsys)
    assert code == 0
    code, distributed, _ = run(
        ["score", "--json", "--engine", "dask", "--scheduler", scheduler, *files], capsys
    )
    assert code == 0 and distributed == local


@pytest.mark.spec("DASK-ENGINE")
def test_a_local_cluster_is_started_without_a_scheduler(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", "--json", "--bootstrap", "200", "--adapter", "parquet", str(table)]
    _, local, _ = run(argv, capsys)
    code, distributed, err = run([*argv, "--engine", "dask", "--workers", "2"], capsys)
    assert code == 0 and err == "" and distributed == local


@pytest.mark.spec("DASK-ENGINE", "REC-UNIQUE", "REC-ERRORS")
def test_faults_are_named_as_in_one_process(
    tmp_path: Path, scheduler: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 1)  # every row group its own unit
    rows = records(n_tasks=4, trials=2)
    cases = {
        # A repeat in another unit (found when two units' accumulators are merged).
        "repeat": [*rows, rows[3]],
        # An invalid row in the last unit, after a repeat in an earlier one: the repeat comes first.
        "both": [*rows[:5], rows[0], *rows[5:], {**rows[1], "trial": 9, "outcome": {"T": 1, "fed": 7}}],
        "invalid": [*rows[:-1], {**rows[-1], "outcome": {"T": 2, "fed": 0}}],
    }
    for name, case in cases.items():
        # JSONL files: one unit per file, the repeat spread over two files.
        half = len(case) // 2
        files = [
            str(write_jsonl(tmp_path / f"{name}-a.jsonl", case[:half])),
            str(write_jsonl(tmp_path / f"{name}-b.jsonl", case[half:])),
        ]
        code, out, err_local = run(["score", *files], capsys)
        assert code == 2 and out == ""
        code, out, err = run(["score", "--engine", "dask", "--scheduler", scheduler, *files], capsys)
        assert (code, out, err) == (2, "", err_local), name
    # Parquet row groups as units: a repeat across row groups of one file.
    path = tmp_path / "repeat.parquet"
    source = write_jsonl(tmp_path / "repeat-all.jsonl", rows)
    assert main(["convert", str(source), "--output", str(path), "--row-group-rows", "3"]) == 0
    capsys.readouterr()
    twice = tmp_path / "twice.parquet"
    table = pq.read_table(path)
    pq.write_table(pa.concat_tables([table, table.slice(4, 1)]), twice, row_group_size=3)
    code, _, err_local = run(["score", "--adapter", "parquet", str(twice)], capsys)
    assert code == 2 and f"{twice}: row {len(rows)}: repeats the key" in err_local
    assert f"first seen at {twice}: row 4" in err_local
    argv = ["score", "--adapter", "parquet", "--engine", "dask", "--scheduler", scheduler, str(twice)]
    code, out, err = run(argv, capsys)
    assert (code, out, err) == (2, "", err_local)


@pytest.mark.spec("DASK-ENGINE", "REC-ERRORS")
def test_option_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = str(write_jsonl(tmp_path / "r.jsonl", records(n_tasks=2, trials=1)))
    dask = ["score", "--engine", "dask"]
    cases = [
        ([*dask, "--adapter", "taubench", source], "--engine: dask reads --adapter records or parquet"),
        ([*dask, "-"], "-: --engine dask reads files, not standard input"),
        ([*dask, "--scheduler", "no address", source], "--scheduler: cannot connect to 'no address'"),
        (
            ["score", "--scheduler", "tcp://127.0.0.1:1", source],
            "--scheduler: only applies with --engine dask",
        ),
        (["score", "--workers", "2", source], "--workers: only applies with --engine dask"),
    ]
    for argv, message in cases:
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "" and message in err and "Traceback" not in err, err


@pytest.mark.spec("DASK-ENGINE")
def test_unit_and_merge_functions(tmp_path: Path) -> None:
    # What the workers run, called here directly: a fault is data, and the earlier unit's wins.
    source = write_jsonl(tmp_path / "r.jsonl", records(n_tasks=3, trials=2))
    good = run_unit("records", 0, Unit(str(source), 0, (), 0, 0))
    assert isinstance(good, AccumulatorSet)
    assert good == accumulate_input("records", [str(source)], AdapterOptions())
    missing = run_unit("parquet", 1, Unit(str(tmp_path / "gone.parquet"), 1, (0,), 0, 5))
    assert missing == Fault(1, str(tmp_path / "gone.parquet"), "no such file")
    other = Fault(2, "x", "y")
    assert merge_outcomes(missing, other) == missing
    assert merge_outcomes(good, other) == other
    repeat = merge_outcomes(good, good)
    assert isinstance(repeat, Fault) and "occurs twice" in repeat.what
