"""``convert --output``: the extension sets the format (spec: CONVERT-FORMAT)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from prefixexec.cli import main

from conftest import REPO

DEMO = REPO / "examples" / "demo.jsonl"
TAU = REPO / "tests" / "data" / "real" / "tau-bench-v1" / "gpt-4o-airline.json"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.spec("CONVERT-FORMAT")
@pytest.mark.parametrize("source", [DEMO, TAU])
def test_csv_and_jsonl_hold_the_parquet_rows(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("t.parquet", "t.csv", "t.jsonl"):
        assert run(["convert", "--quiet", str(source), "--output", str(tmp_path / name)], capsys)[0] == 0
    assert pq.read_metadata(tmp_path / "t.parquet").num_rows > 0  # a real Parquet file
    table = pq.read_table(tmp_path / "t.parquet").to_pylist()
    with (tmp_path / "t.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["dataset", "model", "method", "task_id", "trial", "T", "fed", "label", "success"]
    expected = [
        {k: ("" if v is None else str(v).lower() if isinstance(v, bool) else str(v)) for k, v in row.items()}
        for row in table
    ]
    assert rows == expected
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [
        (
            r["dataset"],
            r["model"],
            r["method"],
            r["task_id"],
            r["trial"],
            r["outcome"]["T"],
            r["outcome"]["fed"],
            r["outcome"].get("label"),
            r["success"],
        )
        for r in records
    ] == [tuple(row.values()) for row in table]


@pytest.mark.spec("CONVERT-FORMAT")
def test_jsonl_output_scores_as_its_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    assert run(["convert", str(DEMO), "--output", str(out)], capsys)[0] == 0
    original = run(["score", "--json", str(DEMO)], capsys)
    again = run(["score", "--json", str(out)], capsys)
    assert original == again and original[0] == 0


@pytest.mark.spec("CONVERT-FORMAT")
@pytest.mark.parametrize("name", ["runs.txt", "runs", "runs.json", "runs.parquet.gz"])
def test_another_extension_is_refused_before_reading(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / name
    code, out, err = run(["convert", str(DEMO), "--output", str(target)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"prefixexec: error: --output: {target} has ") and ".parquet, .csv or .jsonl" in err
    assert not target.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.spec("CONVERT-FORMAT")
def test_upper_case_extension_and_row_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(["convert", str(DEMO), "--output", str(tmp_path / "A.PARQUET"), "--row-group-rows", "3"], capsys)[
            0
        ]
        == 0
    )
    assert pq.ParquetFile(tmp_path / "A.PARQUET").num_row_groups == 3  # 8 rows in groups of 3 (hand count)
    code, _, err = run(
        ["convert", str(DEMO), "--output", str(tmp_path / "a.csv"), "--row-group-rows", "3"], capsys
    )
    assert code == 2 and "--row-group-rows: only applies to a .parquet output" in err
