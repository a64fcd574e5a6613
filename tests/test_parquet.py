"""Parquet outcome tables, `convert`, and streaming `score` (spec/streaming.md PARQUET-*, STREAM-*)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixexec import engine
from prefixexec.adapters import InputError, parquet
from prefixexec.adapters.records import read_records
from prefixexec.cli import main, score_document
from prefixexec.inference import evaluate
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.scoring import dumps
from prefixexec.signature import Signature

from conftest import REPO
from strategies import records_of, triples

EXAMPLE = REPO / "examples" / "demo.jsonl"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def without_signature(text: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(text)
    doc.pop("signature")
    return doc


ROW: dict[str, Any] = {
    "dataset": "d",
    "model": "m",
    "method": "react",
    "task_id": "t1",
    "trial": 0,
    "T": 2,
    "fed": 1,
    "label": "schema",
    "success": True,
}


def table_of(rows: list[dict[str, Any]], **types: Any) -> pa.Table:
    """A plain (not dictionary-encoded) table of the nine columns, with optional column types."""
    default = {
        "dataset": pa.string(),
        "model": pa.string(),
        "method": pa.string(),
        "task_id": pa.string(),
        "trial": pa.int64(),
        "T": pa.int64(),
        "fed": pa.int64(),
        "label": pa.string(),
        "success": pa.bool_(),
    }
    default.update(types)
    return pa.table({k: pa.array([r[k] for r in rows], t) for k, t in default.items()})


def grid_records(n_tasks: int = 9, trials: int = 3) -> list[dict[str, Any]]:
    """Two methods x n_tasks x trials records with varied outcomes and labels (seeded)."""
    rng = random.Random(11)
    labels = [None, "schema", "dependency", "precondition", "state_consistency", "information"]
    out = []
    for method in ("react", "dual-loop"):
        for task in range(n_tasks):
            for trial in range(trials):
                T = rng.randint(1, 6)
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
                        "task_id": f"task{task}",
                        "trial": trial,
                        "success": rng.random() < 0.6,
                        "outcome": outcome,
                    }
                )
    return out


@pytest.mark.spec("PARQUET-CONVERT", "PARQUET-FORMAT", "STREAM-SCORE")
def test_convert_then_score_gives_the_same_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "grid.jsonl", grid_records())
    out = tmp_path / "grid.parquet"
    code, _, err = run(
        ["convert", str(source), str(EXAMPLE), "--output", str(out), "--row-group-rows", "10"], capsys
    )
    assert code == 0 and f"wrote {54 + 8} rollouts" in err  # 2 x 9 x 3 grid records + 8 in demo.jsonl
    meta = pq.ParquetFile(out).metadata
    assert meta.num_rows == 62 and meta.num_row_groups == 7  # ceil(62 / 10)
    assert tuple(meta.schema.to_arrow_schema().names) == parquet.COLUMNS
    for extra in ([], ["--bootstrap", "0"]):
        _, from_jsonl, _ = run(["score", "--json", *extra, str(source), str(EXAMPLE)], capsys)
        _, from_parquet, _ = run(["score", "--json", *extra, "--adapter", "parquet", str(out)], capsys)
        assert without_signature(from_parquet) == without_signature(from_jsonl)
        assert json.loads(from_parquet)["signature"] == json.loads(from_jsonl)["signature"].replace(
            "adapter:records", "adapter:parquet"
        )


@pytest.mark.spec("PARQUET-CONVERT")
def test_rows_keep_input_order_and_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo.parquet"
    assert main(["convert", str(EXAMPLE), "--output", str(out)]) == 0
    table = pq.read_table(out).to_pylist()
    # The first two lines of examples/demo.jsonl: t1 (T 2, FED 3, Y 1) and t2 (T 3, FED 1,
    # precondition, Y 1), both react, trial 0 by default.
    demo = {**ROW, "dataset": "demo", "model": "example-model"}
    assert table[0] == {**demo, "task_id": "t1", "T": 2, "fed": 3, "label": None}
    assert table[1] == {**demo, "task_id": "t2", "T": 3, "fed": 1, "label": "precondition"}
    assert [r["method"] for r in table] == ["react"] * 4 + ["dual-loop"] * 4


@pytest.mark.spec("PARQUET-FORMAT")
def test_plain_strings_integer_task_ids_narrow_ints_and_extra_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {**ROW, "task_id": "7", "trial": 0, "T": 3, "fed": 2, "label": None, "success": False},
        {**ROW, "task_id": "7", "trial": 1, "T": 1, "fed": 2, "label": None, "success": True},
        {**ROW, "task_id": "12", "trial": 0, "T": 2, "fed": 1, "label": "information", "success": True},
    ]
    canonical = tmp_path / "canonical.parquet"
    pq.write_table(table_of(rows), canonical)
    variant = table_of(
        [{**r, "task_id": int(r["task_id"])} for r in rows], task_id=pa.int32(), T=pa.uint8(), fed=pa.int16()
    ).append_column("comment", pa.array(["x", "y", "z"]))
    variant_path = tmp_path / "variant.parquet"
    pq.write_table(variant, variant_path)
    _, a, _ = run(["score", "--json", "--adapter", "parquet", str(canonical)], capsys)
    _, b, _ = run(["score", "--json", "--adapter", "parquet", str(variant_path)], capsys)
    assert a == b
    cond = json.loads(a)["conditions"][0]
    # By hand: 3 rollouts, one fully executable (task 7 trial 1), FED sum 2 + 2 + 1 = 5.
    assert (cond["N"], cond["exact"]["TER"], cond["exact"]["mean_FED"]) == (3, "1/3", "5/3")
    assert cond["labels"]["information"] == 1 and cond["labels"]["unlabelled"] == 1


def bad_file(tmp_path: Path, table: pa.Table) -> Path:
    path = tmp_path / "bad.parquet"
    pq.write_table(table, path)
    return path


GOOD_ROWS = [{**ROW, "task_id": f"t{i}"} for i in range(4)]


def rows_with(index: int, **change: Any) -> list[dict[str, Any]]:
    return [({**r, **change} if i == index else r) for i, r in enumerate(GOOD_ROWS)]


BAD_TABLES: list[tuple[Any, str]] = [
    (lambda: table_of(rows_with(2, T=0, fed=1)), "row 2: 'T' must be an integer >= 1: 0"),
    (lambda: table_of(rows_with(1, fed=4)), "row 1: 'fed' must be in [1, T+1] = [1, 3]: 4"),
    (lambda: table_of(rows_with(3, trial=-2)), "row 3: 'trial' must be >= 0: -2"),
    (
        lambda: table_of(rows_with(2, fed=3)),
        "row 2: 'label' given for a fully executable rollout (fed = T+1): schema",
    ),
    (lambda: table_of(rows_with(1, label="typo")), "row 1: column 'label': unknown label 'typo'"),
    (lambda: table_of(rows_with(2, label="")), "row 2: column 'label': unknown label ''"),
    (lambda: table_of(rows_with(3, method=None)), "row 3: column 'method' is null"),
    (lambda: table_of(rows_with(1, T=None)), "row 1: column 'T' is null"),
    (lambda: table_of(rows_with(2, success=None)), "row 2: column 'success' is null"),
    (
        lambda: table_of(rows_with(1, trial=2**64 - 1), trial=pa.uint64()),
        "row 1: column 'trial' does not fit a 64-bit integer",
    ),
    (lambda: table_of(rows_with(3, task_id="t1")), "row 3: repeats the key (dataset, model, method, task_id"),
    (lambda: table_of(GOOD_ROWS).drop_columns(["fed", "label"]), "missing column(s) fed, label"),
    (lambda: table_of([{**r, "success": 1} for r in GOOD_ROWS], success=pa.int8()), "boolean, got int8"),
    (lambda: table_of([{**r, "T": 2.0} for r in GOOD_ROWS], T=pa.float64()), "must be integer, got double"),
]  # fmt: skip


@pytest.mark.spec("PARQUET-FORMAT", "REC-ERRORS", "ACC-BATCH")
@pytest.mark.parametrize(("make", "message"), BAD_TABLES)
def test_bad_tables_exit_2_naming_file_and_row(
    make: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = bad_file(tmp_path, make())
    out_path = tmp_path / "out.json"
    for command in (["score", "--json", "--output", str(out_path)], ["compare", "--baseline", "x"]):
        code, out, err = run([*command, "--adapter", "parquet", str(path)], capsys)
        assert code == 2 and out == "" and "Traceback" not in err
        assert err.startswith(f"prefixexec: error: {path}: ") and message in err, err
        assert not out_path.exists()
    converted = tmp_path / "converted.parquet"
    code, _, err = run(["convert", "--adapter", "parquet", str(path), "--output", str(converted)], capsys)
    assert code == 2 and message in err and not converted.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.parquet"]  # no temporary file left


@pytest.mark.spec("PARQUET-FORMAT", "REC-UNIQUE")
def test_repeated_key_names_the_first_occurrence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(table_of(GOOD_ROWS), a)
    pq.write_table(table_of([{**ROW, "task_id": "new"}, {**ROW, "task_id": "t2"}]), b)
    key = "('d', 'm', 'react', 't2', 0)"
    for argv in (["score"], ["compare", "--baseline", "react"]):
        code, _, err = run([*argv, "--adapter", "parquet", str(a), str(b)], capsys)
        assert code == 2
        prefix = f"{b}: row 1: repeats the key (dataset, model, method, task_id, trial) = {key}"
        assert f"{prefix} first seen at {a}: row 2" in err


@pytest.mark.spec("PARQUET-FORMAT", "REC-ERRORS")
def test_unreadable_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "text.parquet"
    text.write_text("not parquet\n", encoding="utf-8")
    cases = [
        (str(tmp_path / "nope.parquet"), "nope.parquet: no such file"),
        (str(tmp_path), "is a directory, expected a Parquet file"),
        (str(text), "text.parquet: not a readable Parquet file"),
        ("-", "-: the parquet adapter reads files, not standard input"),
    ]
    for path, message in cases:
        code, out, err = run(["score", "--adapter", "parquet", path], capsys)
        assert code == 2 and out == "" and message in err and "Traceback" not in err
    empty = tmp_path / "empty.parquet"
    pq.write_table(table_of([]), empty)
    code, _, err = run(["score", "--adapter", "parquet", str(empty)], capsys)
    assert code == 2 and "no records found" in err


@pytest.mark.spec("STREAM-SCORE", "ACC-BATCH", "REC-UNIQUE")
@pytest.mark.parametrize("batch_rows", [1, 3, 5, 1000])
def test_faults_across_batch_boundaries(
    batch_rows: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet, "BATCH_ROWS", batch_rows)
    rows = [{**ROW, "task_id": f"t{i}"} for i in range(8)]
    repeat = {**ROW, "task_id": "t1"}
    invalid = {**ROW, "task_id": "t9", "fed": 9}
    cases = [
        ([*rows[:5], repeat, *rows[5:], invalid], "row 5: repeats the key", "first seen at {p}: row 1"),
        ([*rows[:4], invalid, *rows[4:], repeat], "row 4: 'fed' must be in [1, T+1] = [1, 3]: 9", None),
        ([*rows, {**ROW, "task_id": "t7"}], "row 8: repeats the key", "first seen at {p}: row 7"),
    ]
    for table_rows, message, first in cases:
        path = bad_file(tmp_path, table_of(table_rows))
        code, _, err = run(["score", "--adapter", "parquet", str(path)], capsys)
        assert code == 2 and f"{path}: {message}" in err, err
        if first is not None:
            assert first.format(p=path) in err


@pytest.mark.spec("STREAM-SCORE", "REC-UNIQUE", "REC-ERRORS")
@pytest.mark.parametrize("chunk", [1, 2, 3, 1000])
def test_streamed_records_report_what_the_list_reader_reports(
    chunk: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "RECORD_CHUNK", chunk)
    good = records_of(_fixed_items())
    a = write_jsonl(tmp_path / "a.jsonl", good[:4])
    b = write_jsonl(tmp_path / "b.jsonl", [good[4], good[1], {**good[5], "success": "no"}])
    c = write_jsonl(
        tmp_path / "c.jsonl", [good[5], {**good[6], "outcome": {"T": 1, "fed": 5}}, good[6], good[6]]
    )
    d = write_jsonl(tmp_path / "d.jsonl", [good[4], good[5], good[6], good[5], {**good[0], "x": 1}])
    for files in ([a, b], [a, c], [c], [d], [a, d], [d, a]):
        names = [str(f) for f in files]
        with pytest.raises(InputError) as info:
            read_records(names)
        code, out, err = run(["score", *names], capsys)
        assert code == 2 and out == ""
        assert err == f"prefixexec: error: {info.value}\n"


def _fixed_items() -> list[Any]:
    from prefixexec.kernel import Label, Outcome

    return [
        (Outcome(2, 3), True),
        (Outcome(3, 1, Label.SCHEMA), False),
        (Outcome(1, 1), True),
        (Outcome(4, 2, Label.DEPENDENCY), True),
        (Outcome(2, 2), False),
        (Outcome(5, 6), True),
        (Outcome(1, 2), False),
    ]


@pytest.mark.spec("STREAM-SCORE", "REC-UNIQUE")
def test_repeat_first_seen_on_stdin(tmp_path: Path) -> None:
    records = records_of(_fixed_items())
    later = write_jsonl(tmp_path / "later.jsonl", [records[2]])

    def score(stdin: list[dict[str, Any]], *files: Path) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "prefixexec", "score", "-", *map(str, files)],
            input="".join(json.dumps(r) + "\n" for r in stdin),
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 2 and result.stdout == ""
        return result.stderr

    # Standard input cannot be read twice: a first occurrence there, found only by reading the
    # input again, is named as such.
    err = score(records, later)
    assert f"{later}:1: repeats the key" in err and "first seen at an earlier line of <stdin>" in err
    # Within the batch that holds the repeat, the line is known.
    err = score([*records, records[2]])
    assert "<stdin>:8: repeats the key" in err and "first seen at <stdin>:3" in err


@pytest.mark.spec("STREAM-SCORE", "OUT-JSON", "INV-PERM")
@settings(max_examples=20)
@given(
    items=st.lists(triples(max_t=8), min_size=1, max_size=25),
    chunk=st.integers(1, 7),
    parts=st.integers(1, 3),
    boot=st.sampled_from([0, 30]),
)
def test_streamed_score_is_byte_identical_to_the_list_path(
    items: list[Any], chunk: int, parts: int, boot: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("stream")
    records = records_of(items) + records_of(items, method="dual-loop")
    files = [write_jsonl(tmp / f"p{i}.jsonl", records[i::parts]) for i in range(parts)]
    names = [str(f) for f in files]
    settings_ = None if boot == 0 else BootstrapSettings(B=boot, seed=1)
    expected = dumps(
        score_document(
            evaluate(read_records(names), settings_),
            Signature(adapter="records", bootstrap=boot, seed=1, level=0.95, paired=True),
        )
    )
    mp = pytest.MonkeyPatch()
    mp.setattr(engine, "RECORD_CHUNK", chunk)
    try:
        out = tmp / "out.json"
        assert (
            main(["score", "--json", "--bootstrap", str(boot), "--seed", "1", "--output", str(out), *names])
            == 0
        )
    finally:
        mp.undo()
    assert out.read_text(encoding="utf-8") == expected


@pytest.mark.spec("PARQUET-CONVERT", "STREAM-MEMORY")
def test_convert_streams_records_in_batches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # With batches of 4 records, convert writes 8-row row groups as the batches arrive.
    monkeypatch.setattr(engine, "RECORD_CHUNK", 4)
    source = write_jsonl(tmp_path / "grid.jsonl", grid_records(n_tasks=5, trials=2))
    seen: list[int] = []
    original = parquet.to_table

    def spy(batch: Any) -> Any:
        seen.append(len(batch))
        return original(batch)

    monkeypatch.setattr(parquet, "to_table", spy)
    out = tmp_path / "g.parquet"
    assert main(["convert", str(source), "--output", str(out), "--row-group-rows", "8"]) == 0
    assert seen == [4, 4, 4, 4, 4]  # 2 methods x 5 tasks x 2 trials = 20 records
    meta = pq.ParquetFile(out).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [8, 8, 4]
    rows = pq.read_table(out).to_pylist()
    assert [(r["method"], r["task_id"], r["trial"]) for r in rows] == [
        (r["method"], r["task_id"], r["trial"]) for r in grid_records(n_tasks=5, trials=2)
    ]


@pytest.mark.spec("PARQUET-FORMAT")
def test_read_adapter_gives_the_records_rollouts(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "grid.jsonl", grid_records())
    out = tmp_path / "grid.parquet"
    assert main(["convert", str(source), "--output", str(out)]) == 0
    from_records = read_records([str(source)])
    from_parquet = parquet.read([str(out)])
    assert [(r.condition, r.task_id, r.trial, r.outcome, r.success) for r in from_parquet] == [
        (r.condition, r.task_id, r.trial, r.outcome, r.success) for r in from_records
    ]
    assert np.array_equal([r.outcome.fed for r in from_parquet], pq.read_table(out).column("fed").to_numpy())
