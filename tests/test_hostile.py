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
        "leaderboard": ["leaderboard", "--bootstrap", "0", str(path)],
        "leaderboard-md": ["leaderboard", "--bootstrap", "0", "--format", "md", str(path)],
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
    # The reader opens the FIFO before the command runs (a thread's open could come after the
    # command's, which then finds no reader: HOSTILE-OUTPUT-SPECIAL refuses that, by design).
    read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(read_end, True)

    def read_all() -> None:
        # With no writer yet a read gives EOF at once: wait (up to 30 s) for the first bytes, then
        # read to the end the command's close makes.
        chunks: list[bytes] = []
        deadline = time.monotonic() + 30
        with os.fdopen(read_end, "rb", buffering=0) as handle:
            while True:
                chunk = handle.read(1 << 16)
                if chunk:
                    chunks.append(chunk)
                elif chunks or time.monotonic() > deadline:
                    break
                else:
                    time.sleep(0.01)
        received.append(b"".join(chunks))

    reader = threading.Thread(target=read_all)
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


# ---------------------------------------------------------------------------------------------
# Round three (issue 28): network, patterns, schemas, pseudo-files, terminals, outputs, numbers


def chat_line(
    arguments: dict[str, Any],
    parameters: Any,
    result: str = "ok",
    is_error: bool = False,
    **change: Any,
) -> dict[str, Any]:
    """One chat transcript: a call of tool ``t`` with ``arguments`` and its result."""
    base: dict[str, Any] = {
        "task_id": "t1",
        "model": "m",
        "method": "x",
        "success": True,
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "t", "arguments": json.dumps(arguments)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": result, "is_error": is_error},
        ],
        "tools": [{"type": "function", "function": {"name": "t", "parameters": parameters}}],
    }
    base.update(change)
    return base


class Listener:
    """A local TCP listener that records every connection (HOSTILE-NETWORK: none may come)."""

    def __init__(self) -> None:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> int:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()
        return self.connections


@pytest.fixture
def listener() -> Any:
    found = Listener()
    yield found
    assert found.close() == 0, "prefixexec connected to the listener"


@pytest.mark.spec("HOSTILE-NETWORK", "CHAT-SCHEMA-REF")
@pytest.mark.parametrize("where", ["root", "property"])
def test_a_remote_ref_is_never_fetched(
    where: str, listener: Listener, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{listener.port}/schema.json"
    schema = {"$ref": url} if where == "root" else {"type": "object", "properties": {"a": {"$ref": url}}}
    path = jsonl(tmp_path / "c.jsonl", chat_line({"a": 1}, schema))
    # The root $ref is reached when the tool is read; the property's only by this call's 'a'.
    place = f"{path}:1: tools[0]" if where == "root" else f"{path}:1: messages[0].tool_calls[0]"
    one_error(*run(capsys, *SCORE, "--adapter", "chat", str(path)), place, "unresolvable $ref", url)
    assert listener.close() == 0


@pytest.mark.spec("CHAT-SCHEMA-CYCLE")
@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {
            "type": "object",
            "properties": {"q": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}},
        },
    ],
)
def test_a_schema_that_refers_to_itself_names_the_tool(
    schema: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "c.jsonl", chat_line({"q": 1}, schema))
    one_error(
        *run(capsys, *SCORE, "--adapter", "chat", str(path)), "tool 't'", "refers to itself", f"{path}:1"
    )


@pytest.mark.spec("CHAT-SCHEMA-CYCLE")
def test_a_recursive_schema_that_descends_is_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = {
        "$defs": {"n": {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}}},
        "$ref": "#/$defs/n",
    }
    good = chat_line({"c": {"c": {}}}, tree, task_id="good")
    bad = chat_line({"c": {"c": {"c": 1}}}, tree, task_id="bad")
    code, out, err = run(
        capsys, "explain", "--json", "--adapter", "chat", str(jsonl(tmp_path / "c.jsonl", good, bad))
    )
    assert code == 0, err
    rows = {r["task_id"]: r for r in map(json.loads, out.splitlines())}
    assert rows["good"]["fed"] == 2 and rows["bad"]["fed"] == 1  # T = 1: FED = T + 1 when executable
    assert "arguments.c.c.c: 1 is not of type 'object'" in rows["bad"]["reason"]


CATASTROPHIC = "^(a+)+$"
VICTIM = "a" * 40 + "!"  # 41 characters: Python's re backtracks 2**40 ways


@pytest.mark.spec("HOSTILE-REGEX")
def test_a_catastrophic_schema_pattern_is_matched_in_linear_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": CATASTROPHIC}}}
    keys = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {"type": "integer"}},
        "additionalProperties": False,
    }
    path = jsonl(
        tmp_path / "c.jsonl",
        chat_line({"q": VICTIM}, schema, task_id="pattern"),
        chat_line({VICTIM: 1, "aaa": 2}, keys, task_id="keys"),
    )
    start = time.perf_counter()
    code, out, err = run(capsys, "explain", "--json", "--adapter", "chat", str(path))
    assert code == 0, err
    assert time.perf_counter() - start < 5  # Python's re: past 60 s
    rows = {r["task_id"]: r for r in map(json.loads, out.splitlines())}
    assert "does not match '^(a+)+$'" in rows["pattern"]["reason"]
    # VICTIM matches no pattern: it is an additional property; 'aaa' matches and is an integer.
    assert (
        "Additional properties are not allowed" in rows["keys"]["reason"]
        and "'aaa'" not in rows["keys"]["reason"]
    )


@pytest.mark.spec("HOSTILE-REGEX", "LABEL-RULES")
def test_catastrophic_label_rules_and_error_patterns_are_linear(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = write(tmp_path / "rules.toml", '[[chat]]\npattern = "(a+)+$"\nlabel = "state_consistency"\n')
    path = jsonl(tmp_path / "c.jsonl", chat_line({}, {"type": "object"}, result=VICTIM + "x", is_error=True))
    start = time.perf_counter()
    code, out, err = run(
        capsys, "explain", "--json", "--adapter", "chat", "--label-rules", str(rules), str(path)
    )
    assert code == 0, err and len(VICTIM + "x") == 42
    assert json.loads(out)["label"] is None  # the rule does not match ('!x' ends it): no family either
    plain = jsonl(tmp_path / "p.jsonl", chat_line({}, {"type": "object"}, result=VICTIM))
    code, out, err = run(
        capsys, "explain", "--json", "--adapter", "chat", "--error-pattern", "(a+)+$", str(plain)
    )
    assert code == 0, err
    assert json.loads(out)["fed"] == 2  # the result does not match: the call executed
    assert time.perf_counter() - start < 5


@pytest.mark.spec("HOSTILE-REGEX")
@pytest.mark.parametrize(
    ("where", "pattern"),
    [("schema", "(?<=a)b"), ("schema", "(a)\\1"), ("rules", "(?!x)"), ("error", "(?<=a)b"), ("draft4", "(")],
)
def test_patterns_the_linear_engine_lacks_are_refused_in_one_line(
    where: str, pattern: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra: list[str] = []
    schema: Any = {"type": "object"}
    if where == "schema":
        schema = {"type": "object", "properties": {"q": {"pattern": pattern}}}
    elif where == "draft4":  # the draft-04 meta-schema does not check patternProperties' keys
        schema = {"$schema": "http://json-schema.org/draft-04/schema#", "patternProperties": {pattern: {}}}
    elif where == "rules":
        rules = write(tmp_path / "rules.toml", f'[[chat]]\npattern = "{pattern}"\nlabel = "schema"\n')
        extra = ["--label-rules", str(rules)]
    else:
        extra = ["--error-pattern", pattern]
    path = jsonl(tmp_path / "c.jsonl", chat_line({"q": "b"}, schema))
    one_error(*run(capsys, *SCORE, "--adapter", "chat", *extra, str(path)), "RE2")


@pytest.mark.spec("HOSTILE-SCHEMA-COST")
def test_unique_items_over_many_unhashable_items_is_linear(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}
    many = [[i, {"k": i}] for i in range(20_000)]
    path = jsonl(
        tmp_path / "c.jsonl",
        chat_line({"xs": many}, schema, task_id="unique"),
        chat_line({"xs": [*many, [5, {"k": 5}]]}, schema, task_id="repeat"),
        chat_line({"xs": [1, True, {"a": 1, "b": 2}]}, schema, task_id="json-equal-not"),
        chat_line({"xs": [1, 1.0]}, schema, task_id="json-equal"),
    )
    assert path.stat().st_size > 380_000
    start = time.perf_counter()
    code, out, err = run(capsys, "explain", "--json", "--adapter", "chat", str(path))
    assert code == 0, err
    assert time.perf_counter() - start < 15  # jsonschema's pairwise fallback: past 60 s
    fed = {r["task_id"]: r["fed"] for r in map(json.loads, out.splitlines())}
    assert fed == {"unique": 2, "repeat": 1, "json-equal-not": 2, "json-equal": 1}


@pytest.mark.spec("LABEL-MASK")
def test_label_masking_is_one_pass() -> None:
    from prefixexec.adapters.labels import MASK, mask_arguments

    values = [f"v{i}x" for i in range(20_000)]
    message = " ".join(f"{values[(i * 7919) % 20_000]} filler" for i in range(40_000))
    message = message[: message.rindex(" ", 0, 500_000)]  # 500 KB of whole tokens
    start = time.perf_counter()
    masked = mask_arguments(message, {"ids": values})
    assert time.perf_counter() - start < 5  # one regex per value: past 60 s
    assert "v" not in masked.replace("filler", "")  # every id masked, every filler kept
    assert masked.count("filler") == message.count("filler")
    # Overlapping occurrences are masked together; glued ones not at all.
    assert mask_arguments("ids U-1-2 and xU-1", ["U-1", "1-2"]) == f"ids {MASK} and xU-1"


def _bfcl_file(tmp_path: Path, entry_id: str, steps: list[str]) -> Path:
    path = tmp_path / "result" / "m" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    turns = [steps, [], [], [], []]
    path.write_text(json.dumps({"id": entry_id, "result": turns}) + "\n", encoding="utf-8")
    return path


def _math_task() -> str:
    from prefixexec.adapters import bfcl

    return next(
        t
        for t in (f"multi_turn_base_{i}" for i in range(200))
        if "MathAPI" in bfcl.task(t).entry.involved_classes
    )


@pytest.mark.spec("HOSTILE-BFCL-COST")
def test_a_huge_hexadecimal_literal_is_a_schema_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _bfcl_file(tmp_path, "multi_turn_base_0", ["[cd(folder=0x" + "f" * 5000 + ")]"])
    code, out, err = run(capsys, "explain", "--json", "--adapter", "bfcl", str(path))
    assert code == 0, err
    row = json.loads(out.splitlines()[0])
    assert row["fed"] == 1 and row["label"] == "schema"
    assert "integer literal of more than 4300 decimal digits" in row["reason"]


@pytest.mark.spec("HOSTILE-BFCL-COST")
def test_negative_numbers_are_bounded_for_every_method() -> None:
    from prefixexec.adapters import bfcl
    from prefixexec.kernel import Label

    task_id = _math_task()
    start = time.perf_counter()
    one = bfcl.replay_calls(task_id, [["round_number(number=5, decimal_places=-1000000000)"]], success=False)
    assert one.outcome.fed == 1 and one.outcome.label is Label.SCHEMA
    assert one.outcome.reason is not None and "negative integer below -100000" in one.outcome.reason
    # -90,000 is within the bound per argument; the rollout's sum passes 1,000,000 at call 12.
    many = bfcl.replay_calls(task_id, [["round_number(number=5, decimal_places=-90000)"] * 50], success=False)
    assert many.outcome.fed == 12 and many.outcome.reason is not None
    assert "summed over this rollout exceed the limit 1000000" in many.outcome.reason
    nested = bfcl.replay_calls(task_id, [["mean(numbers=[1, 2, -200000])"]], success=False)
    assert nested.outcome.fed == 1 and "below -100000" in str(nested.outcome.reason)
    assert time.perf_counter() - start < 10  # round(5, -10**9) alone: hours


def _subprocess(*argv: str, stdin: Any = subprocess.DEVNULL, timeout: float = 30, **kw: Any) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "prefixexec", *argv],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kw,
    )


def _one_line_2(proc: Any, *fragments: str) -> str:
    return one_error(proc.returncode, proc.stdout, proc.stderr, *fragments)


@pytest.mark.spec("HOSTILE-PSEUDO")
@pytest.mark.skipif(not os.path.exists("/proc/kmsg"), reason="needs Linux procfs (/proc/kmsg)")
def test_pseudo_files_are_refused_before_they_are_read(tmp_path: Path) -> None:
    # In a subprocess with a time limit: a read of /proc/kmsg blocks until killed.
    _one_line_2(_subprocess("score", "/proc/kmsg"), "/proc/kmsg", "pseudo-file system")
    link = tmp_path / "mem.jsonl"
    link.symlink_to("/proc/self/mem")
    _one_line_2(_subprocess("score", "--adapter", "records", str(link)), str(link), "pseudo-file system")
    run_dir = tmp_path / "run"
    shutil.copytree(DATA / "toolsandbox" / "hostile_run", run_dir)
    context = run_dir / "trajectories" / "hostile_code" / "execution_context.json"
    context.unlink()
    context.symlink_to("/proc/kmsg")
    _one_line_2(_subprocess("score", "--adapter", "toolsandbox", str(run_dir)), str(context), "pseudo-file")
    with open("/proc/version", "rb") as version:
        _one_line_2(
            _subprocess("score", "--adapter", "records", "-", stdin=version), "<stdin>", "pseudo-file"
        )
    rules = tmp_path / "rules.toml"
    rules.symlink_to("/proc/kmsg")
    records = jsonl(tmp_path / "r.jsonl", record())
    proc = _subprocess("score", "--adapter", "chat", "--label-rules", str(rules), str(records))
    _one_line_2(proc, str(rules), "pseudo-file")


@pytest.mark.spec("HOSTILE-FIFO", "HOSTILE-OPTION-FILE")
def test_named_pipes_are_refused_and_open_pipes_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fifo_json = tmp_path / "claims.json"  # crosscheck tells a claims file by its extension first
    os.mkfifo(fifo_json)
    records = jsonl(tmp_path / "r.jsonl", record())
    for argv, fragment in (
        (["score", str(fifo)], "named pipe"),
        (["score", "--adapter", "records", str(fifo)], "named pipe"),
        (["score", "--adapter", "chat", "--label-rules", str(fifo), str(records)], "named pipe"),
        (["score", "--adapter", "records", "--select", f"task_id=@{fifo}", str(records)], "not a regular"),
        # the task lists of `sample` and the claims of `crosscheck` (#30, #26) get the same checks
        (["sample", "--size", "1", str(fifo)], "named pipe"),
        (["crosscheck", str(fifo_json), str(records)], "named pipe"),
    ):
        named = str(fifo_json) if argv[0] == "crosscheck" else str(fifo)
        _one_line_2(_subprocess(*argv), named, fragment)  # --label-rules fifo blocked forever before
    # A pipe the shell opened (/dev/fd/N of <(...)) is read, once.
    read_end, write_end = os.pipe()
    os.write(write_end, (json.dumps(record()) + "\n").encode())
    os.close(write_end)
    proc = _subprocess(
        "score",
        "--json",
        "--bootstrap",
        "0",
        "--adapter",
        "records",
        f"/dev/fd/{read_end}",
        pass_fds=(read_end,),
    )
    os.close(read_end)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["conditions"][0]["N"] == 1


@pytest.mark.spec("HOSTILE-READ")
def test_a_read_that_fails_names_the_file() -> None:
    from prefixexec.adapters.errors import InputError
    from prefixexec.adapters.inputs import reading

    with pytest.raises(InputError) as caught, reading("x.jsonl"):
        raise OSError(5, "Input/output error")
    assert str(caught.value) == "x.jsonl: cannot read: Input/output error"


@pytest.mark.spec("HOSTILE-CONTROL", "HOSTILE-ONE-LINE")
def test_a_file_name_with_a_newline_stays_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = tmp_path / "a\nb\x1b[2J.jsonl"
    line = one_error(*run(capsys, *SCORE, "--adapter", "records", str(name)), "no such file")
    assert "a\\x0ab\\x1b[2J.jsonl" in line and "\x1b" not in line
    jsonl(name, record())
    code, _out, err = run(capsys, "score", "--adapter", "chat", str(name))
    assert code == 2 and len(err.splitlines()) == 1 and "a\\x0ab" in err  # the hint names it too


HOSTILE_NAME = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mred\u202e\x9b1m\nsecond"
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


@pytest.mark.spec("HOSTILE-CONTROL")
@pytest.mark.parametrize(
    "command",
    ["score", "compare", "explain", "score-json", "audit", "report", "leaderboard", "leaderboard-md"],
)
def test_control_characters_from_the_input_are_escaped(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(
        tmp_path / "r.jsonl",
        record(model=HOSTILE_NAME, method="x"),
        record(
            model=HOSTILE_NAME,
            method="y\u2066",
            outcome={"T": 2, "fed": 1, "label": "schema", "reason": "bad\x1b[2Jthing"},
        ),
    )
    argv = {
        "score": [*SCORE[:-1], str(path)],
        "compare": ["compare", "--bootstrap", "0", "--baseline", "x", str(path)],
        "explain": ["explain", str(path)],
        "score-json": [*SCORE, str(path)],
        "audit": ["audit", "--adapter", "records", str(path)],
        "report": ["report", str(path), "--out", str(tmp_path / "rep"), "--bootstrap", "0", "--quiet"],
        "leaderboard": ["leaderboard", "--bootstrap", "0", str(path)],
        "leaderboard-md": ["leaderboard", "--bootstrap", "0", "--format", "md", str(path)],
    }[command]
    code, out, err = run(capsys, *argv)
    assert code in ((0, 1, 2) if command == "audit" else (0, 1)), err  # audit: 2 = nothing checkable
    assert out
    texts = [out, err]
    if command == "report":
        names = ("table.md", "table.tex", "leaderboard.md", "leaderboard.tex")  # csv: data, as JSON
        texts += [(tmp_path / "rep" / name).read_text(encoding="utf-8") for name in names]
    # JSON is data: JSON escapes C0 (ESC, BEL); a table, trace or error escapes every control too.
    shown = ("\x1b", "\x07") if command == "score-json" else RAW_CONTROLS
    for text in texts:
        assert not any(c in text for c in shown), (command, text[:300])
    if command == "score":
        assert "\\x1b]0;PWNED\\x07" in out and "\\x0asecond" in out  # shown, on the title's line
    if command == "score-json":
        assert json.loads(out)["conditions"][0]["model"] == HOSTILE_NAME  # the same string to JSON


@pytest.mark.spec("HOSTILE-LINES")
def test_lines_end_at_newline_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    separators = "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e"
    entry = {"id": "multi_turn_base_0", "result": [[f"[cd(folder='doc{separators}x')]"], [], [], []]}
    path = tmp_path / "result" / "m" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(entry, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, err = run(capsys, *SCORE, "--adapter", "bfcl", str(path))
    assert code == 0, err  # was: "Unterminated string" (str.splitlines broke the line)
    records = write(
        tmp_path / "r.jsonl", json.dumps(record(meta={"s": separators}), ensure_ascii=False) + "\r\n"
    )
    code, out, err = run(capsys, *SCORE, "--adapter", "records", str(records))
    assert code == 0, err and json.loads(out)["conditions"][0]["N"] == 1
    ids = write(tmp_path / "ids.txt", "t\u2028u\nt\n")
    code, out, err = run(capsys, *SCORE, "--adapter", "records", "--select", f"task_id=@{ids}", str(records))
    assert code == 0, err
    proc = _subprocess(
        *SCORE, "--adapter", "records", "-", stdin=None, input=records.read_text(encoding="utf-8")
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.spec("DETECT-LONG-LINE")
@pytest.mark.parametrize("kind", ["records", "chat", "bfcl", "records-meta-first"])
def test_a_first_line_longer_than_the_head_is_detected(kind: str, tmp_path: Path) -> None:
    from prefixexec.adapters.detect import HEAD_BYTES, detect

    pad = "x" * (2 * HEAD_BYTES)
    document = {
        "records": record(meta={"pad": pad}),
        "chat": chat_line({}, {"type": "object"}, result=pad),
        "bfcl": {"id": "multi_turn_base_0", "result": [[pad], [], [], []]},
        "records-meta-first": {"meta": {"pad": pad}, **record()},
    }[kind]
    path = write(tmp_path / "x.jsonl", json.dumps(document) + "\n")
    assert detect(str(path)).adapter == kind.split("-")[0]


@pytest.mark.spec("HOSTILE-TRIAL", "HOSTILE-NOTICE")
def test_an_inspect_epoch_beyond_the_bound_is_named_and_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = {
        "eval": {"task": "t", "model": "m", "solver": "s", "scorers": [{"name": "match"}]},
        "samples": [{"id": 1, "epoch": 2**62, "messages": [{"role": "user", "content": "hi"}], "scores": {}}],
    }
    path = write(tmp_path / "log.json", json.dumps(log))
    line = one_error(
        *run(capsys, *SCORE, "--adapter", "inspect", "--scorer", "match", str(path)),
        "'epoch' = 4611686018427387904",
    )
    assert "trial" not in line.split("exceeds")[0]
    # The same log with a valid epoch scores, and its INS-UNSCORED warning comes after success.
    log["samples"][0]["epoch"] = 1  # type: ignore[index]
    write(path, json.dumps(log))
    code, _out, err = run(capsys, *SCORE, "--adapter", "inspect", "--scorer", "match", str(path))
    assert code == 0 and "INS-UNSCORED" in err


def set_inputs_of(argv: list[str]) -> set[str]:
    """The files a command's arguments make inputs (HOSTILE-OPTION-FILE)."""
    from prefixexec.cli import build_parser, option_files

    args = build_parser(argv[0]).parse_args(argv)
    return {*getattr(args, "files", []), *option_files(args)}


@pytest.mark.spec("HOSTILE-OPTION-FILE", "HOSTILE-OUTPUT-INPUT")
def test_files_that_options_read_are_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = jsonl(tmp_path / "r.jsonl", record())
    rules = write(tmp_path / "r1.toml", '[[chat]]\npattern = "x"\nlabel = "schema"\n')
    chat = jsonl(tmp_path / "c.jsonl", chat_line({}, {"type": "object"}))
    one_error(
        *run(
            capsys,
            *SCORE,
            "--adapter",
            "chat",
            "--label-rules",
            str(rules),
            "--output",
            str(rules),
            str(chat),
        ),
        "refusing to overwrite an input",
    )
    ids = write(tmp_path / "ids1.txt", "t\n")
    one_error(
        *run(capsys, *SCORE, "--select", f"task_id=@{ids}", "--output", str(ids), str(records)),
        "refusing to overwrite",
    )
    table = write(tmp_path / "t.csv", "dataset,model,method,N,TER\nd,m,x,3,0.33\n")
    theirs = write(tmp_path / "theirs.json", "{}")
    for option in (["audit-table", str(table)], ["crosscheck", str(theirs), str(records)]):
        assert set_inputs_of(option) >= {str(option[1])}
    assert (
        rules.read_text(encoding="utf-8").startswith("[[chat]]") and ids.read_text(encoding="utf-8") == "t\n"
    )


@pytest.mark.spec("HOSTILE-OUTPUT-TWICE")
def test_two_outputs_on_one_file_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = jsonl(tmp_path / "r.jsonl", record())
    same = tmp_path / "same.jsonl"
    one_error(
        *run(capsys, *SCORE, "--output", str(same), "--rollouts", str(same), str(records)), "two outputs"
    )
    (tmp_path / "link.jsonl").symlink_to(same)
    same.write_text("old\n", encoding="utf-8")
    one_error(
        *run(capsys, *SCORE, "--output", str(same), "--rollouts", str(tmp_path / "link.jsonl"), str(records)),
        "two outputs",
    )
    assert same.read_text(encoding="utf-8") == "old\n"
    rep = tmp_path / "rep"
    rep.mkdir()
    one_error(
        *run(
            capsys, "report", str(records), "--out", str(rep), "--rollouts", str(rep / "table.csv"), "--quiet"
        ),
        "two outputs",
    )
    rows = str(tmp_path / "r.csv")
    code, _, err = run(capsys, *SCORE, "--output", "/dev/null", "--rollouts", rows, str(records))
    assert code == 0, err


@pytest.mark.spec("HOSTILE-REPORT")
def test_a_report_checks_its_files_first_and_writes_all_or_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    rollouts = jsonl(out / "rollouts.jsonl", *(record(task_id=f"t{i}") for i in range(50)))
    start = time.perf_counter()
    one_error(*run(capsys, "report", str(rollouts), "--out", str(out), "--quiet"), "rollouts.jsonl", "input")
    assert time.perf_counter() - start < 2  # was 9 s of work first
    assert sorted(p.name for p in out.iterdir()) == ["rollouts.jsonl"]
    # A write that fails half-way leaves no file and no folder.
    fresh = tmp_path / "fresh"
    written: list[str] = []
    original = Path.write_bytes

    def failing(self: Path, data: bytes) -> int:
        written.append(self.name)
        if len(written) == 5:
            raise OSError(28, "No space left on device")
        return original(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing)
    one_error(
        *run(capsys, "report", str(rollouts), "--out", str(fresh), "--bootstrap", "0", "--quiet"),
        "No space left",
    )
    assert len(written) == 5 and not fresh.exists()


@pytest.mark.spec("HOSTILE-ONE-LINE")
def test_a_foreign_message_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64 + b"\x10\x00\x00\x00PAR1")
    one_error(*run(capsys, *SCORE, "--adapter", "parquet", str(path)), str(path))


@pytest.mark.spec("HOSTILE-PIPE")
@pytest.mark.parametrize("command", ["explain", "score", "score-json", "audit-table"])
def test_a_closed_pipe_ends_every_command_the_same_way(command: str, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "r.jsonl", *(record(task_id="t", method=f"m{i}") for i in range(50)))
    table = write(tmp_path / "t.csv", "dataset,model,method,N,TER\nd,m,x,3,0.33\n")
    argv = {
        "explain": ["explain", str(path)],
        "score": ["score", "--bootstrap", "0", str(path)],
        "score-json": [*SCORE, str(path)],
        "audit-table": ["audit-table", str(table)],
    }[command]
    # Standard output is a pipe whose reader has gone: the first write fails (EPIPE), as when
    # `| head -c 10` has read its bytes and exited (explain exited 1 then, score 0).
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "prefixexec", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, b"")


@pytest.mark.spec("HOSTILE-ZIP")
@pytest.mark.parametrize(
    ("bit", "what"), [(0x1, "encrypted"), (0x20, "patched"), (0x40, "strong encryption")]
)
def test_encrypted_or_patched_members_are_one_line(
    bit: int, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
    data = bytearray(path.read_bytes())  # zipfile writes no such flag: set it in both headers
    for magic, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(magic) + offset
        data[at] |= bit
    path.write_bytes(bytes(data))
    one_error(*run(capsys, *SCORE, "--adapter", "inspect", str(path)), f"{path}: header.json", what)


@pytest.mark.spec("AUDIT-TABLE-LIMIT")
@pytest.mark.parametrize(
    ("cells", "code", "fragment"),
    [
        ("30000,0.50,1.10,0.70,,0.33,0.62", 1, "not searched"),  # inconsistent: mean FED < 1 + TER
        ("1000000000000000000,0.50,1.10,0.70,,0.33,0.62", 2, "column N: deciding this row"),
        ("9" * 5000 + ",0.5,,,,,", 2, "column N: not an integer >= 1 of at most 30 digits"),
        ("10,0." + "9" * 5000 + ",,,,,", 2, "column TER: a number of more than 30 digits"),
    ],
)
def test_audit_table_cost_is_bounded(
    cells: str, code: int, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = write(
        tmp_path / "t.csv",
        "dataset,model,method,N,TER,mean_FED,AUC_PEC,RR_eligible,RR,success\nd,m,x," + cells + "\n",
    )
    start = time.perf_counter()
    got, out, err = run(capsys, "audit-table", str(table))
    assert time.perf_counter() - start < 5  # N = 30,000: 49 s before; 10**18: forever
    assert got == code, err
    if code == 2:
        one_error(got, out, err, f"{table}:2", fragment)
    else:
        assert fragment in out and err == ""


@pytest.mark.spec("XCHK-NUMBERS")
@pytest.mark.parametrize(
    ("value", "expected", "fragment"),
    [
        ('"TER": "' + "9" * 5000 + '/7"', 2, "conditions[0].exact.TER"),  # beyond the digit limit
        ('"TER": "' + "9" * 400 + '/7"', 1, "differ"),  # compared exactly; its float is beyond range
        ('"TER": 1e999', 2, "expected a finite number"),
    ],
)
def test_crosscheck_numbers_of_any_size(
    value: str, expected: int, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = {"T": 3, "fed": 2}  # TER = 0: the exact "0" and the float 0.0 are replaced below
    records = jsonl(tmp_path / "r.jsonl", *(record(task_id=f"t{i}", outcome=failing) for i in range(7)))
    code, ours, err = run(capsys, *SCORE, str(records))
    assert code == 0, err
    replace = '"TER": 0.0' if "1e999" in value else '"TER": "0"'
    assert replace in ours
    theirs = write(tmp_path / "theirs.json", ours.replace(replace, value, 1))
    got, out, err = run(capsys, "crosscheck", str(theirs), str(records))
    if expected == 2:
        one_error(got, out, err, str(theirs), fragment)
    else:
        assert got == 1 and fragment in out and err == "", err


@pytest.mark.spec("CONF-OUTPUT-LIMIT")
@pytest.mark.skipif(shutil.which("yes") is None, reason="needs the yes command")
def test_conformance_reads_a_bounded_output(capsys: pytest.CaptureFixture[str]) -> None:
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    try:
        code, out, err = run(capsys, "conformance", "--command", "yes", "--only", "edge-all-executable")
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert code == 1, err
    assert "wrote more than 16777216 bytes to standard output" in out
    assert time.perf_counter() - start < 10 and peak < 200 * 2**20  # was 5.7 GB in 22 s
