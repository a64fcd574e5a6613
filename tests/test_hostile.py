"""Hostile and broken input (spec/hostile.md, issue 15): one error line and exit 2, never a
traceback; bounded cost; no output file clobbered.

Most cases run the command line in this process (``prefixexec.cli.main``); signals and devices
on standard input run it in a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from prefixexec.cli import main

from conftest import REPO

DATA = REPO / "tests" / "data"
DEEP = "[" * 100_000 + "]" * 100_000


def record(**change: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "dataset": "d",
        "task_id": "t",
        "model": "m",
        "method": "x",
        "success": True,
        "outcome": {"T": 3, "fed": 4},
    }
    base.update(change)
    return base


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def jsonl(path: Path, *records: dict[str, Any]) -> Path:
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(code: int, out: str, err: str, *fragments: str) -> str:
    """The one error line of a refused run (exit 2, nothing on stdout), with ``fragments`` in it."""
    lines = [line for line in err.splitlines() if not line.startswith("prefixexec: reading ")]
    assert code == 2, err
    assert out == ""
    assert len(lines) == 1 and lines[0].startswith("prefixexec: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


SCORE = ("score", "--bootstrap", "0", "--json")


# ---------------------------------------------------------------------------------------------
# Deep JSON


@pytest.mark.spec("HOSTILE-DEPTH", "HOSTILE-ERROR")
@pytest.mark.parametrize("where", ["line", "meta"])
@pytest.mark.parametrize("command", ["score", "compare", "convert", "report"])
def test_deep_json_in_records_every_command(
    where: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = DEEP if where == "line" else json.dumps(record())[:-1] + ', "meta": {"a": ' + DEEP + "}}"
    path = write(tmp_path / "deep.jsonl", json.dumps(record(task_id="ok")) + "\n" + text + "\n")
    argv = {
        "score": [*SCORE, str(path)],
        "compare": ["compare", "--bootstrap", "0", "--baseline", "x", str(path)],
        "convert": ["convert", str(path), "--output", str(tmp_path / "o.parquet")],
        "report": ["report", str(path), "--out", str(tmp_path / "rep"), "--bootstrap", "0", "--quiet"],
    }[command]
    one_error(*run(capsys, *argv, "--adapter", "records"), f"{path}:2", "nested too deeply")
    assert not (tmp_path / "o.parquet").exists() and not (tmp_path / "rep").exists()


@pytest.mark.spec("HOSTILE-DEPTH")
def test_deep_json_with_the_dask_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        tmp_path / "deep.jsonl",
        json.dumps(record(task_id="ok"))
        + "\n"
        + json.dumps(record())[:-1]
        + ', "meta": {"a": '
        + DEEP
        + "}}\n",
    )
    argv = [*SCORE, "--adapter", "records", "--engine", "dask", "--workers", "1", str(path)]
    one_error(*run(capsys, *argv), f"{path}:2", "nested too deeply")


def _deep_inputs(tmp_path: Path) -> dict[str, Path]:
    chat = write(tmp_path / "chat.jsonl", DEEP + "\n")
    tau = write(tmp_path / "tau.json", DEEP)
    inspect = write(tmp_path / "log.json", '{"eval": ' + DEEP + "}")
    sandbox = tmp_path / "run"
    shutil.copytree(DATA / "toolsandbox" / "hostile_run", sandbox)
    write(sandbox / "result_summary.json", DEEP)
    return {"chat": chat, "taubench": tau, "inspect": inspect, "toolsandbox": sandbox}


@pytest.mark.spec("HOSTILE-DEPTH", "HOSTILE-ERROR")
@pytest.mark.parametrize("adapter", ["chat", "taubench", "inspect", "toolsandbox"])
def test_deep_json_in_every_adapter(adapter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _deep_inputs(tmp_path)[adapter]
    one_error(*run(capsys, *SCORE, "--adapter", adapter, str(path)), "nested too deeply")


# ---------------------------------------------------------------------------------------------
# Numbers out of range


@pytest.mark.spec("HOSTILE-HORIZON", "HOSTILE-TRIAL", "HOSTILE-ERROR")
@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('"outcome": {"T": 9223372036854775808, "fed": 1}', "at outcome.T"),
        ('"outcome": {"T": 1e308, "fed": 1}', "at outcome.T"),
        ('"outcome": {"T": 4611686018427387904, "fed": 1}', "at outcome.T"),
        ('"outcome": {"T": 10000000, "fed": 1}', "maximum of 100000"),
        ('"outcome": {"T": 100001, "fed": 1}', "maximum of 100000"),
        ('"outcome": {"T": 3, "fed": 1e308}', "at outcome.fed"),
        ('"trial": 9223372036854775807, "outcome": {"T": 3, "fed": 4}', "maximum of 4611686018427387903"),
        ('"trial": 9223372036854775808, "outcome": {"T": 3, "fed": 4}', "at trial"),
        ('"trial": 1e308, "outcome": {"T": 3, "fed": 4}', "at trial"),
        ('"task_id": 9223372036854775808, "outcome": {"T": 3, "fed": 4}', "at task_id"),
    ],
)
def test_numbers_beyond_the_bounds_are_refused_at_once(
    text: str, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = '{"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": true, ' + text + "}"
    if '"task_id": 9' in text:
        line = line.replace('"task_id": "t", ', "")
    path = write(tmp_path / "r.jsonl", line + "\n")
    start = time.perf_counter()
    one_error(*run(capsys, *SCORE, "--adapter", "records", str(path)), f"{path}:1", fragment)
    assert time.perf_counter() - start < 5


@pytest.mark.spec("HOSTILE-HORIZON")
def test_the_largest_horizon_is_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = jsonl(tmp_path / "r.jsonl", record(outcome={"T": 100_000, "fed": 50_001}))
    code, out, err = run(capsys, *SCORE, "--adapter", "records", str(path))
    assert code == 0, err
    (result,) = json.loads(out)["conditions"]
    assert result["mean_FED"] == 50001 and len(result["PEC"]) == 100_000  # the one rollout's FED and T


def _parquet(path: Path, **change: Any) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    row: dict[str, Any] = {
        "dataset": "d",
        "model": "m",
        "method": "x",
        "task_id": "t",
        "trial": 0,
        "T": 2,
        "fed": 3,
        "label": None,
        "success": True,
    }
    rows = [row, {**row, "task_id": "u", **change}]
    types = {
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
    pq.write_table(pa.table({k: pa.array([r[k] for r in rows], t) for k, t in types.items()}), path)
    return path


@pytest.mark.spec("HOSTILE-ROLLOUT", "HOSTILE-HORIZON", "HOSTILE-TRIAL", "HOSTILE-TEXT")
@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"T": 2**62, "fed": 1}, "exceeds the horizon limit 100000"),
        ({"T": 2**63 - 1, "fed": 1}, "exceeds the horizon limit 100000"),
        ({"trial": 2**63 - 1}, "'trial' = 9223372036854775807 exceeds the limit"),
        ({"dataset": ""}, "'dataset' must be a non-empty string"),
        ({"task_id": ""}, "'task_id' must be a non-empty string"),
    ],
)
def test_parquet_rows_pass_the_checks_of_records(
    change: dict[str, Any], fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _parquet(tmp_path / "p.parquet", **change)
    for engine in ("local", "dask"):
        argv = [*SCORE, "--adapter", "parquet", "--engine", engine, str(path)]
        if engine == "dask":
            argv += ["--workers", "1"]
        one_error(*run(capsys, *argv), f"{path}: row 1", fragment)


# ---------------------------------------------------------------------------------------------
# Integral floats and numeric ids


@pytest.mark.spec("HOSTILE-INTEGRAL")
def test_integral_floats_are_the_integers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ints = jsonl(tmp_path / "a.jsonl", record(task_id=1, trial=1, outcome={"T": 2, "fed": 1}))
    floats = jsonl(tmp_path / "b.jsonl", record(task_id=1.0, trial=1.0, outcome={"T": 2.0, "fed": 1.0}))
    code_a, out_a, _ = run(capsys, *SCORE, "--adapter", "records", str(ints))
    code_b, out_b, _ = run(capsys, *SCORE, "--adapter", "records", str(floats))
    assert code_a == code_b == 0 and out_a == out_b
    # 1, 1.0 and "1" are one task: given together they repeat the key.
    both = jsonl(tmp_path / "c.jsonl", record(task_id=1), record(task_id=1.0))
    one_error(*run(capsys, *SCORE, "--adapter", "records", str(both)), f"{both}:2", "repeats the key")
    both = jsonl(tmp_path / "d.jsonl", record(task_id="1"), record(task_id=1.0))
    one_error(*run(capsys, *SCORE, "--adapter", "records", str(both)), f"{both}:2", "repeats the key")


VALUES: list[Any] = [
    0,
    1,
    2,
    2.0,
    2.5,
    -1,
    -1.0,
    0.0,
    True,
    None,
    "2",
    1e308,
    1e400,
    100_000,
    100_000.0,
    100_001,
    2**62 - 1,
    2**62,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    4611686018427387903.0,
]


@pytest.mark.spec("HOSTILE-INTEGRAL", "HOSTILE-HORIZON", "HOSTILE-TRIAL", "HOSTILE-TASK-ID")
@pytest.mark.parametrize("field", ["T", "fed", "trial", "task_id"])
def test_schema_and_reader_decide_alike(field: str, tmp_path: Path) -> None:
    """For each value, spec/record.schema.json (jsonschema, draft 2020-12) accepts the record
    exactly when both readers (the fast path and the reference path) accept it."""
    import jsonschema

    from prefixexec.adapters import AdapterOptions, InputError
    from prefixexec.adapters.records import iter_file, legacy_iter_lines
    from prefixexec.engine import accumulate_input

    schema = json.loads((REPO / "spec" / "record.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    for value in VALUES:
        r = (
            record(outcome={"T": 100_001, "fed": 1})
            if field == "T"
            else record(outcome={"T": 100_000, "fed": 1})
        )
        if field in ("T", "fed"):
            r["outcome"][field] = value
        else:
            r[field] = value
        text = json.dumps(r) if value != 1e400 else json.dumps(r).replace("Infinity", "1e400")
        path = write(tmp_path / "r.jsonl", text + "\n")
        # With T = 100,000 the schema's bound on fed is REC-OUTCOME's fed <= T + 1.
        expected = validator.is_valid(json.loads(text))
        lines = list(enumerate(path.read_text(encoding="utf-8").splitlines(keepends=True), start=1))
        for name, read in (
            ("reference", lambda p=path, lines=lines: list(legacy_iter_lines(str(p), lines))),
            ("fast", lambda p=path: accumulate_input("records", [str(p)], AdapterOptions())),
            ("iter_file", lambda p=path: list(iter_file(str(p)))),
        ):
            try:
                read()
                accepted = True
            except InputError:
                accepted = False
            assert accepted == expected, (field, value, name)


# ---------------------------------------------------------------------------------------------
# Lone surrogates


@pytest.mark.spec("HOSTILE-TEXT", "HOSTILE-ROLLOUT")
def test_lone_surrogate_in_a_name_is_refused_in_every_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = write(tmp_path / "r.jsonl", json.dumps(record()).replace('"d"', '"\\ud800"') + "\n")
    one_error(
        *run(capsys, *SCORE, "--adapter", "records", str(rec)), f"{rec}:1", "'dataset' holds a lone surrogate"
    )
    chat_line = (DATA / "chat" / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()[0]
    chat = write(tmp_path / "c.jsonl", chat_line.replace('"model": "gpt-x"', '"model": "\\udc80"') + "\n")
    one_error(*run(capsys, *SCORE, "--adapter", "chat", str(chat)), "'model' holds a lone surrogate")
    tau = json.loads((DATA / "taubench" / "hotel-es.json").read_text(encoding="utf-8"))
    tau["info"]["environment_info"]["domain_name"] = "\udfff"
    tau_path = write(tmp_path / "results.json", json.dumps(tau))
    one_error(
        *run(capsys, *SCORE, "--adapter", "taubench", str(tau_path)), "'dataset' holds a lone surrogate"
    )


@pytest.mark.spec("HOSTILE-TEXT")
def test_lone_surrogate_in_free_text_is_written_escaped(tmp_path: Path) -> None:
    reason = record(outcome={"T": 2, "fed": 1, "reason": "bad \ud800 arg"})
    path = write(tmp_path / "r.jsonl", json.dumps(reason) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "prefixexec", "explain", "--adapter", "records", str(path)],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert b"bad \\ud800 arg" in done.stdout and b"Traceback" not in done.stderr
    # The report's files (HTML, Markdown, JSONL) hold it escaped too.
    assert (
        main(
            [
                "report",
                "--adapter",
                "records",
                str(path),
                "--out",
                str(tmp_path / "rep"),
                "--bootstrap",
                "0",
                "--quiet",
            ]
        )
        == 0
    )
    rows = [
        json.loads(line)
        for line in (tmp_path / "rep" / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [row["reason"] for row in rows] == ["bad \\ud800 arg"]


# ---------------------------------------------------------------------------------------------
# Files that cannot be read to an end


@pytest.mark.spec("HOSTILE-LOOP")
@pytest.mark.parametrize(
    "adapter", ["records", "chat", "taubench", "inspect", "toolsandbox", "bfcl", "parquet"]
)
def test_symlink_loop_as_input(adapter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    one_error(*run(capsys, *SCORE, "--adapter", adapter, str(loop)), str(loop), "symbolic links")


@pytest.mark.spec("HOSTILE-DEVICE")
@pytest.mark.parametrize("adapter", ["records", "chat", "taubench", "inspect", "parquet"])
def test_devices_as_input_are_refused(
    adapter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "log.eval"
    link.symlink_to("/dev/urandom")
    one_error(*run(capsys, *SCORE, "--adapter", adapter, "/dev/zero"), "/dev/zero", "is a device")
    one_error(*run(capsys, *SCORE, "--adapter", adapter, str(link)), str(link), "is a device")


@pytest.mark.spec("HOSTILE-DEVICE")
@pytest.mark.parametrize("adapter", ["records", "auto"])
def test_stdin_from_dev_zero_is_refused(adapter: str) -> None:
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(
            [sys.executable, "-m", "prefixexec", *SCORE, "--adapter", adapter, "-"],
            stdin=zero,
            capture_output=True,
            timeout=60,
        )
    assert done.returncode == 2 and done.stdout == b""
    assert (
        done.stderr.decode().strip()
        == "prefixexec: error: <stdin>: is a device, not a stream that ends (HOSTILE-DEVICE)"
    )


@pytest.mark.spec("HOSTILE-LINE")
def test_an_endless_line_on_a_pipe_ends_with_an_error() -> None:
    # `cat /dev/zero |`: an endless line of NUL bytes on a pipe (not a device).
    cat = subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE)
    assert cat.stdout is not None
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "prefixexec",
            *SCORE,
            "--adapter",
            "records",
            "--max-line-bytes",
            "1000000",
            "-",
        ],
        stdin=cat.stdout,
        capture_output=True,
        timeout=60,
    )
    cat.stdout.close()
    cat.kill()
    cat.wait()
    assert done.returncode == 2
    assert done.stderr.decode().strip() == (
        "prefixexec: error: <stdin>:1: line longer than 1000000 bytes "
        "(HOSTILE-LINE; raise it with --max-line-bytes)"
    )


@pytest.mark.spec("HOSTILE-LINE")
def test_line_limit_in_files_and_its_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long = record(meta={"pad": "é" * 600})  # 1,200+ bytes of UTF-8 in 600+ characters
    path = jsonl(tmp_path / "r.jsonl", record(task_id="a"), long)
    size = len((json.dumps(long) + "\n").encode("utf-8"))
    limit = str(size - 1)
    one_error(
        *run(capsys, *SCORE, "--adapter", "records", "--max-line-bytes", limit, str(path)),
        f"{path}:2",
        f"line longer than {limit} bytes",
    )
    chat = jsonl(tmp_path / "c.jsonl", long)  # the chat reader reads lines alike
    one_error(
        *run(capsys, *SCORE, "--adapter", "chat", "--max-line-bytes", limit, str(chat)),
        f"{chat}:1",
        f"line longer than {limit} bytes",
    )
    code, _, err = run(capsys, *SCORE, "--adapter", "records", "--max-line-bytes", str(size), str(path))
    assert code == 0, err


# ---------------------------------------------------------------------------------------------
# inspect


def _eval_with(tmp_path: Path, name: str, data: bytes, method: int = zipfile.ZIP_DEFLATED) -> Path:
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("header.json", data)
    return path


@pytest.mark.spec("HOSTILE-ERROR")
def test_inspect_header_faults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = json.loads((DATA / "inspect" / "tiny_tools.json").read_text(encoding="utf-8"))
    log["eval"]["scorers"] = 5
    path = write(tmp_path / "a.json", json.dumps(log))
    one_error(*run(capsys, *SCORE, "--adapter", "inspect", str(path)), "eval.scorers must be a list, got int")
    big = write(tmp_path / "b.json", '{"eval": {"task": "t", "model": "m", "x": ' + "7" * 5000 + "}}")
    one_error(*run(capsys, *SCORE, "--adapter", "inspect", str(big)), str(big), "not valid JSON")


@pytest.mark.spec("HOSTILE-ZIP")
def test_eval_whose_central_directory_points_past_its_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _eval_with(tmp_path, "header.json", b"{}")
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 16 : end + 20] = (len(data) + 10_000).to_bytes(4, "little")  # central directory offset
    path.write_bytes(bytes(data))
    one_error(*run(capsys, *SCORE, "--adapter", "inspect", str(path)), str(path))


@pytest.mark.spec("HOSTILE-ZIP")
def test_eval_bombs_are_refused_without_decompressing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tracemalloc

    # A deflate member of 300 MB of zeros (about 300 KB compressed): over the size and ratio caps.
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("header.json", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(300):
                member.write(block)
    assert path.stat().st_size < 2_000_000
    tracemalloc.start()
    one_error(*run(capsys, *SCORE, "--adapter", "inspect", str(path)), "header.json", "HOSTILE-ZIP")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50_000_000
    # A small member whose sizes declare 3.9 GB (patched in the central directory and the header).
    small = _eval_with(tmp_path, "header.json", b"{}" * 100)
    data = bytearray(small.read_bytes())
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (3_900_000_000).to_bytes(4, "little")
    small.write_bytes(bytes(data))
    one_error(*run(capsys, *SCORE, "--adapter", "inspect", str(small)), "declares 3900000000 bytes")


# ---------------------------------------------------------------------------------------------
# BFCL cost


@pytest.mark.spec("HOSTILE-BFCL-COST")
def test_bfcl_precision_budget_per_rollout() -> None:
    from prefixexec.adapters import bfcl
    from prefixexec.kernel import Label

    task_id = next(
        t
        for t in (f"multi_turn_base_{i}" for i in range(200))
        if "MathAPI" in bfcl.task(t).entry.involved_classes
    )
    start = time.perf_counter()
    replayed = bfcl.replay_calls(task_id, [["square_root(number=2, precision=10000)"] * 2000], success=False)
    elapsed = time.perf_counter() - start
    # Ten calls at precision 10,000 spend the budget of 100,000; the eleventh is rejected.
    assert replayed.outcome.fed == 11 and replayed.outcome.label is Label.SCHEMA
    assert replayed.outcome.reason is not None and "exceeds the limit 100000" in replayed.outcome.reason
    assert elapsed < 10  # was 62 s for the 2,000 calls
    assert len(replayed.records) == 11 and not replayed.records[10].executed


# ---------------------------------------------------------------------------------------------
# Outputs


@pytest.mark.spec("HOSTILE-OUTPUT-EARLY")
@pytest.mark.parametrize("output", ["DIR", ".", "", "/", "missing/x.json", "FILE/x.json", "/sys/x.json"])
def test_bad_output_paths_are_refused_before_the_input_is_read(
    output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    bad_input = write(tmp_path / "bad.jsonl", "{not json\n")  # reading it would be the error
    (tmp_path / "FILE").write_text("x", encoding="utf-8")
    target = str(tmp_path) if output == "DIR" else output
    line = one_error(*run(capsys, *SCORE, "--adapter", "records", str(bad_input), "--output", target))
    assert "not valid JSON" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE", "bad.jsonl"]


@pytest.mark.spec("HOSTILE-OUTPUT-EARLY")
def test_report_folder_checked_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad_input = write(tmp_path / "bad.jsonl", "{not json\n")
    for folder in ("/sys/report", "/sys/a/b"):
        line = one_error(
            *run(capsys, "report", "--adapter", "records", str(bad_input), "--out", folder, "--quiet")
        )
        assert "is not writable" in line and "not valid JSON" not in line


@pytest.mark.spec("HOSTILE-OUTPUT-INPUT")
def test_an_output_naming_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = jsonl(tmp_path / "a.jsonl", record())
    b = jsonl(tmp_path / "b.jsonl", record(task_id="u"))
    link = tmp_path / "link.jsonl"
    link.symlink_to(b)
    before = a.read_bytes(), b.read_bytes()
    for argv in (
        [*SCORE, str(a), str(b), "--output", str(a)],
        [*SCORE, str(a), str(b), "--output", str(link)],
        ["compare", "--bootstrap", "0", "--baseline", "x", str(a), str(b), "--output", str(b)],
        [*SCORE, str(a), "--rollouts", str(a)],
        ["convert", str(a), "--output", str(a)],
        ["report", str(a), "--out", str(a), "--quiet"],
    ):
        one_error(*run(capsys, *argv, "--adapter", "records"), "refusing to overwrite an input")
    assert (a.read_bytes(), b.read_bytes()) == before and link.is_symlink()


@pytest.mark.spec("HOSTILE-OUTPUT-SPECIAL")
def test_special_files_are_written_directly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = jsonl(tmp_path / "a.jsonl", record())
    code, expected, _ = run(capsys, *SCORE, "--adapter", "records", str(path))
    assert code == 0
    # A FIFO: the output arrives through it and it stays a FIFO.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, err = run(capsys, *SCORE, "--adapter", "records", str(path), "--output", str(fifo))
    reader.join(30)
    assert code == 0, err
    assert received == [expected.encode("utf-8")] and stat.S_ISFIFO(fifo.lstat().st_mode)
    # A private null device (same numbers as /dev/null) and a symbolic link to it: both stay.
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    link = tmp_path / "to-null"
    link.symlink_to(null)
    for target in (null, link):
        code, _, err = run(capsys, *SCORE, "--adapter", "records", str(path), "--output", str(target))
        assert code == 0, err
    assert stat.S_ISCHR(null.lstat().st_mode) and link.is_symlink() and os.readlink(link) == str(null)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".prefixexec-")]


@pytest.mark.spec("HOSTILE-OUTPUT-SPECIAL")
def test_output_to_dev_stdout(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "a.jsonl", record())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "prefixexec",
            *SCORE,
            "--adapter",
            "records",
            str(path),
            "--output",
            "/dev/stdout",
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["conditions"][0]["N"] == 1
    # Standard output redirected to a regular file: written through it, /dev/stdout untouched.
    captured = tmp_path / "captured.json"
    with captured.open("wb") as handle:
        argv = [*SCORE, "--adapter", "records", str(path), "--output", "/dev/stdout"]
        done = subprocess.run([sys.executable, "-m", "prefixexec", *argv], stdout=handle, timeout=120)
    assert done.returncode == 0
    assert json.loads(captured.read_text(encoding="utf-8"))["conditions"][0]["N"] == 1
    assert not stat.S_ISREG(os.lstat("/dev/stdout").st_mode)  # still a link or a device


@pytest.mark.spec("HOSTILE-OUTPUT-SPECIAL")
def test_symlink_to_a_regular_file_keeps_pointing_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "a.jsonl", record())
    target = write(tmp_path / "old.json", "old")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    code, _, err = run(capsys, *SCORE, "--adapter", "records", str(path), "--output", str(link))
    assert code == 0, err
    assert link.is_symlink() and json.loads(target.read_text(encoding="utf-8"))["conditions"][0]["N"] == 1


SIGNAL_SCRIPT = """
import os, signal, sys, time
from pathlib import Path
import prefixexec.cli
def write_text(self, *args, **kwargs):
    self.open("w").write("partial")
    os.kill(os.getpid(), signal.{name})
    time.sleep(30)
Path.write_text = write_text
sys.exit(prefixexec.cli.main(sys.argv[1:]))
"""


@pytest.mark.spec("HOSTILE-SIGNAL")
@pytest.mark.parametrize(("name", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_during_the_write_leaves_nothing(name: str, status: int, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "a.jsonl", record())
    out = tmp_path / "out" / "o.json"
    out.parent.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SIGNAL_SCRIPT.format(name=name),
            *SCORE,
            "--adapter",
            "records",
            str(path),
            "--output",
            str(out),
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == status, done.stderr
    assert b"Traceback" not in done.stderr
    assert done.stderr.decode().strip() in ("prefixexec: interrupted", "prefixexec: terminated")
    assert list(out.parent.iterdir()) == []
    assert getattr(signal, name)  # the signal exists on this platform


# ---------------------------------------------------------------------------------------------
# Messages


@pytest.mark.spec("HOSTILE-REPEAT-PLACE")
def test_the_same_file_twice_names_the_first_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = jsonl(tmp_path / "a.jsonl", record(task_id="a"), record(task_id="b"))
    line = one_error(*run(capsys, *SCORE, "--adapter", "records", str(path), str(path)), "repeats the key")
    assert line.endswith(f"first seen at {path}:1") and "<stdin>" not in line


@pytest.mark.spec("HOSTILE-DEVICE", "HOSTILE-DEPTH")
def test_files_inside_a_toolsandbox_run_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(DATA / "toolsandbox" / "hostile_run", run_dir)
    context = run_dir / "trajectories" / "hostile_code" / "execution_context.json"
    context.unlink()
    context.symlink_to("/dev/zero")
    # Not a regular file: the run lacks its context (the reader never opens the device).
    one_error(*run(capsys, *SCORE, "--adapter", "toolsandbox", str(run_dir)), "hostile_code")
    context.unlink()
    write(context, DEEP)
    one_error(
        *run(capsys, *SCORE, "--adapter", "toolsandbox", str(run_dir)), str(context), "nested too deeply"
    )


def _wide(path: Path, tasks: int, horizon: int) -> Path:
    """One rollout of horizon ``horizon`` and ``tasks - 1`` short ones, all in one condition."""
    rows = [record(task_id="t0", outcome={"T": horizon, "fed": horizon + 1})]
    rows += [record(task_id=f"t{i}") for i in range(1, tasks)]
    return jsonl(path, *rows)


@pytest.mark.spec("HOSTILE-CELLS")
@pytest.mark.parametrize("extra", [[], ["--rollouts", "ROLLOUTS"], ["--adapter", "parquet"]])
def test_tasks_times_horizon_is_bounded(
    extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tracemalloc

    # 2,000 tasks and one horizon of 100,000: 200 million cells (4.8 GB of histograms) before.
    path = _wide(tmp_path / "w.jsonl", 2000, 100_000)
    if extra[:2] == ["--adapter", "parquet"]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        table = {
            "dataset": pa.array([r["dataset"] for r in rows]),
            "model": pa.array([r["model"] for r in rows]),
            "method": pa.array([r["method"] for r in rows]),
            "task_id": pa.array([r["task_id"] for r in rows]),
            "trial": pa.array([0] * len(rows), pa.int64()),
            "T": pa.array([r["outcome"]["T"] for r in rows], pa.int64()),
            "fed": pa.array([r["outcome"]["fed"] for r in rows], pa.int64()),
            "label": pa.array([None] * len(rows), pa.string()),
            "success": pa.array([True] * len(rows)),
        }
        path = tmp_path / "w.parquet"
        pq.write_table(pa.table(table), path)
    extra = [str(tmp_path / "r.jsonl") if x == "ROLLOUTS" else x for x in extra]
    argv = [*SCORE, *(extra if "parquet" in extra else ["--adapter", "records", *extra])]
    tracemalloc.start()
    start = time.perf_counter()
    try:
        line = one_error(*run(capsys, *argv, str(path)), "HOSTILE-CELLS", "horizon 100000")
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.perf_counter() - start < 30
    assert peak < 600 * 2**20
    assert "over the limit 4194304" in line


@pytest.mark.spec("HOSTILE-CELLS")
def test_many_tasks_with_ordinary_horizons_are_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 4,000 tasks x horizon 1,000 = 4 million cells: within the bound of 2^22 = 4,194,304.
    path = _wide(tmp_path / "w.jsonl", 4000, 1000)
    code, out, err = run(capsys, *SCORE, "--adapter", "records", str(path))
    assert code == 0, err
    assert json.loads(out)["conditions"][0]["N"] == 4000


@pytest.mark.spec("HOSTILE-STDIN")
@pytest.mark.parametrize("adapter", ["taubench", "auto"])
def test_a_document_on_stdin_is_bounded(
    adapter: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from prefixexec.adapters import limits

    monkeypatch.setattr(limits, "MAX_STDIN_DOCUMENT", 1000)  # the bound, made small for the test
    monkeypatch.setattr(sys, "stdin", io.StringIO("[\n" + " " * 5000 + "]\n"))
    one_error(*run(capsys, *SCORE, "--adapter", adapter, "-"), "<stdin>", "longer than 1000 characters")


@pytest.mark.spec("HOSTILE-CELLS")
def test_tasks_times_horizon_across_dask_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Each file alone is within the bound (100,001 and 300 cells); merged, 101 tasks x 100,000 are not.
    long = jsonl(tmp_path / "a.jsonl", record(task_id="t0", outcome={"T": 100_000, "fed": 1}))
    short = jsonl(tmp_path / "b.jsonl", *[record(task_id=f"t{i}") for i in range(1, 101)])
    argv = [*SCORE, "--adapter", "records", "--engine", "dask", "--workers", "1", str(long), str(short)]
    one_error(*run(capsys, *argv), "HOSTILE-CELLS", "101 tasks x horizon 100000")
