"""Hostile input, round four (issue 40): huge integers, Unicode digits, line breaks the format
does not have, shell words in printed advice, cost that follows a count, overlapping archive
members, error paths (spec/hostile.md: HOSTILE-BIGINT, HOSTILE-DIGITS, HOSTILE-LINES,
HOSTILE-SHELL, HOSTILE-COUNT-COST, HOSTILE-ZIP-OVERLAP, HOSTILE-ERROR-PATH).

Each case is built from a real file of its format (tests/data, tests/data/real) with one hostile
edit, and failed on the code before issue 40 (a traceback, or a command that ran what it held).
"""

from __future__ import annotations

import decimal
import json
import shlex
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from prefixexec.cli import main

from conftest import REAL, REPO

DATA = REPO / "tests" / "data"
#: An integer of 5,000 digits: beyond Python's 4,300-digit limit on converting text to int.
HUGE = "7" * 5000
#: 10**400: beyond the range of a double (float() raises OverflowError).
BIG = "1" + "0" * 400
TAU2_RUN = (
    REAL / "tau2" / "2025-10-13T11-33-36.494859_airline_llm_agent_grok-3-mini_user_simulator_grok-3-mini.json"
)
SUBMISSION = REAL / "tau2-leaderboard" / "gpt-oss-120b_openai.submission.json"
INSPECT_LOG = (
    REAL / "inspect" / "inst-logs_2025-04-07T11-00-30-05-00_arithmetic-with-tool_gKECTBvzvzgtPqQCd3cirF.json"
)
OTEL = DATA / "traces" / "agents-otel-genai.jsonl"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(code: int, out: str, err: str) -> str:
    """The one error line of a failed run (HOSTILE-ERROR), checked."""
    lines = [line for line in err.splitlines() if line]
    assert code == 2 and out == "", err
    assert len(lines) == 1 and lines[0].startswith("prefixexec: error: "), err
    return lines[0]


def outcome(task: object, **change: object) -> str:
    line = {
        "dataset": "d",
        "task_id": task,
        "model": "m",
        "method": "x",
        "success": True,
        "outcome": {"T": 2, "fed": 3},
    }
    line.update(change)
    return json.dumps(line) + "\n"


def tau2_tasks(folder: Path, domain: str = "airline") -> Path:
    """A tau2 domain folder holding the real run's own tasks (its tasks.json content)."""
    path = folder / "domains" / domain / "tasks.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(json.loads(TAU2_RUN.read_text(encoding="utf-8"))["tasks"]), encoding="utf-8")
    return path


def big_int(text: str) -> int:
    """An integer's decimal text read at any size (int() refuses more than 4,300 digits)."""
    return int(decimal.Decimal(text))


# ------------------------------------------------------------------------------------------
# HOSTILE-BIGINT: integers of any size in the input


def _json_cases(tmp: Path) -> dict[str, list[str]]:
    """A command per JSON reader, each reading a real file's format with a 5,000-digit integer."""
    records = tmp / "r.jsonl"
    records.write_text(outcome("t"), encoding="utf-8")
    (tmp / "huge.jsonl").write_text(outcome("t").replace('"t"', HUGE), encoding="utf-8")
    ids = tmp / "ids.json"
    ids.write_text(f'["t", {HUGE}]', encoding="utf-8")
    tasks = tau2_tasks(tmp / "a")
    tasks.write_text(
        tasks.read_text(encoding="utf-8").replace('"id": "8"', f'"id": "8", "x": {HUGE}', 1), "utf-8"
    )
    split = tau2_tasks(tmp / "b")
    (split.parent / "split_tasks.json").write_text(f'{{"base": ["8", {HUGE}]}}', encoding="utf-8")
    bfcl = tmp / "BFCL_v4_multi_turn_base.json"
    bfcl.write_text(f'{{"id": "multi_turn_base_0", "x": {HUGE}}}\n', encoding="utf-8")
    inspect = tmp / "log.json"
    inspect.write_text(
        INSPECT_LOG.read_text(encoding="utf-8").replace('"value": "C"', f'"value": {HUGE}', 1), "utf-8"
    )
    return {
        "records": ["score", "--adapter", "records", str(tmp / "huge.jsonl")],
        "select @ids.json": ["score", "--select", f"task_id=@{ids}", str(records)],
        "tau2 tasks.json": ["sample", "--size", "2", str(tasks)],
        "tau2 split_tasks.json": ["sample", "--size", "2", str(split)],
        "BFCL data file": ["sample", "--size", "1", str(bfcl)],
        "inspect log": ["score", "--adapter", "inspect", str(inspect)],
    }


@pytest.mark.spec("HOSTILE-BIGINT", "HOSTILE-ERROR")
@pytest.mark.parametrize(
    "case",
    [
        "records",
        "select @ids.json",
        "tau2 tasks.json",
        "tau2 split_tasks.json",
        "BFCL data file",
        "inspect log",
    ],
)
def test_a_5000_digit_integer_in_any_json_reader_is_one_error_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: the --select file, tau2 task and split files and BFCL data files caught only
    # JSONDecodeError and ended in "ValueError: Exceeds the limit (4300 digits)" (a traceback).
    line = one_error(*run(capsys, *_json_cases(tmp_path)[case]))
    assert "an integer of more than 4300 digits" in line
    assert "set_int_max_str_digits" not in line  # Python's advice to a programmer, not to the user


@pytest.mark.spec("HOSTILE-BIGINT")
def test_a_tau2_submission_with_a_5000_digit_pass_k_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SUBMISSION.read_text(encoding="utf-8").replace(
        '"pass_1": 53.51', f'"pass_1": 53.51, "pass_{HUGE}": 1', 1
    )
    assert HUGE in text
    path = tmp_path / "x.submission.json"
    path.write_text(text, encoding="utf-8")
    records = tmp_path / "r.jsonl"
    records.write_text(outcome("t"), encoding="utf-8")
    line = one_error(*run(capsys, "crosscheck", str(path), str(records)))
    assert "results.retail.pass_777777777...: 'pass_k' with a k of 5000 digits" in line
    assert len(line) < 400  # the key is not written whole


def _score_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out, err = run(capsys, "score", "--json", "--bootstrap", "0", *argv)
    assert code == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc


@pytest.mark.spec("HOSTILE-BIGINT")
@pytest.mark.parametrize("threshold", [[], ["--threshold", "0.5"]])
def test_an_otel_evaluation_score_of_10_to_the_400(
    threshold: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The real trace's passing evaluations score 1.0 (4 of them: grep -c '"doubleValue":1.0}');
    # 10**400 passes alike (it is +inf to a comparison). Before: OverflowError, a traceback.
    text = OTEL.read_text(encoding="utf-8")
    assert text.count('"doubleValue":1.0}') == 4
    path = tmp_path / "t.jsonl"
    path.write_text(text.replace('"doubleValue":1.0}', f'"intValue":"{BIG}"}}'), encoding="utf-8")
    ours = _score_json(capsys, "--adapter", "otel", *threshold, str(path))
    assert ours["conditions"] == _score_json(capsys, "--adapter", "otel", *threshold, str(OTEL))["conditions"]


@pytest.mark.spec("HOSTILE-BIGINT", "INS-VALUE")
def test_an_inspect_score_of_10_to_the_400_is_the_string_1e400(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # inspect's value_to_float: a number is its float; 10**400 has none (OverflowError before), so
    # it is +inf like the string "1e400", which INS-VALUE reads as not finite: Y = 0.
    text = INSPECT_LOG.read_text(encoding="utf-8")
    big, word = tmp_path / "big.json", tmp_path / "word.json"
    big.write_text(text.replace('"value": "C"', f'"value": {BIG}'), encoding="utf-8")
    word.write_text(text.replace('"value": "C"', '"value": "1e400"'), encoding="utf-8")
    ours = _score_json(capsys, "--adapter", "inspect", str(big))["conditions"]
    assert ours == _score_json(capsys, "--adapter", "inspect", str(word))["conditions"]
    assert [c["exact"]["success"] for c in ours] == ["0"]


def _primes(limit: int) -> list[int]:
    sieve = bytearray([1]) * (limit + 1)
    sieve[:2] = b"\0\0"
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return [i for i in range(limit + 1) if sieve[i]]


@pytest.mark.spec("HOSTILE-BIGINT", "OUT-JSON")
def test_an_exact_auc_pec_of_more_than_4300_digits_is_written_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One task, one trial per prime horizon below 12,000 (1,438 primes): AUC-PEC's denominator
    # is their product, about 5,000 digits (sum of log10 p). Before: score --json (and report)
    # ended in "ValueError: Exceeds the limit (4300 digits)".
    primes = _primes(12_000)
    path = tmp_path / "r.jsonl"
    path.write_text(
        "".join(
            outcome("t", trial=i, success=False, outcome={"T": p, "fed": 1 + (i * 7919) % p})
            for i, p in enumerate(primes)
        ),
        encoding="utf-8",
    )
    (condition,) = _score_json(capsys, str(path))["conditions"]
    numerator, _, denominator = condition["exact"]["AUC_PEC"].partition("/")
    value = Fraction(big_int(numerator), big_int(denominator))
    assert max(len(numerator), len(denominator)) > 4300
    assert float(value) == pytest.approx(condition["AUC_PEC"], rel=1e-12)
    # (report writes the same values with the same function, prefixexec.scoring.exact; it is not
    # run here: its figures of 12,000 depths take minutes to draw)


@pytest.mark.spec("HOSTILE-BIGINT", "CMP-MCNEMAR")
def test_an_exact_mcnemar_p_value_of_one_over_2_to_the_14299(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 14,300 tasks that method a solves and b does not: b = 14,300 discordant pairs, c = 0, so
    # p = 2 C(n, 0) / 2^n = 1/2^14299 (the exact McNemar p-value), a denominator of 4,305 digits.
    path = tmp_path / "r.jsonl"
    path.write_text(
        "".join(
            outcome(i, method=m, success=ok, outcome={"T": 1, "fed": 2 if ok else 1})
            for i in range(14_300)
            for m, ok in (("a", True), ("b", False))
        ),
        encoding="utf-8",
    )
    code, out, err = run(capsys, "compare", "--json", "--baseline", "b", "--bootstrap", "0", str(path))
    assert code == 0, err
    (comparison,) = json.loads(out)["comparisons"]
    tests = comparison["mcnemar"]
    assert tests, comparison
    for test in tests.values():
        numerator, _, denominator = test["p_value_exact"].partition("/")
        assert (numerator, big_int(denominator)) == ("1", 2**14299)
        assert test["p_adjusted_exact"].partition("/")[0] == "1"
    code, out, err = run(capsys, "compare", "--baseline", "b", "--bootstrap", "0", str(path))
    assert code == 0, err


# ------------------------------------------------------------------------------------------
# HOSTILE-DIGITS: "²".isdigit() is true, int("²") raises


@pytest.mark.spec("HOSTILE-DIGITS", "AUDIT-TABLE-CSV")
def test_a_superscript_two_as_an_audit_tables_n(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = (DATA / "paper_table2.csv").read_text(encoding="utf-8")
    head, first, *_ = table.split("\n")
    path = tmp_path / "t.csv"
    row = first.replace(",200,", ",\u00b2,", 1)
    path.write_text(f"{head}\n{row}\n", encoding="utf-8")
    line = one_error(*run(capsys, "audit-table", str(path)))
    assert "t.csv:2: column N: not an integer >= 1" in line and "'\u00b2'" in line


@pytest.mark.spec("HOSTILE-DIGITS", "XCHK-NUMBERS")
def test_a_superscript_two_in_their_rollouts_fed_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = str(REPO / "examples" / "demo.jsonl")
    code, out, err = run(capsys, "score", "--json", "--bootstrap", "0", demo)
    assert code == 0, err
    plain = tmp_path / "plain.json"
    plain.write_text(out, encoding="utf-8")
    rollouts = tmp_path / "rollouts.csv"  # tests/test_crosscheck.py's per-rollout file, FED "²"
    rollouts.write_text("dataset,model,method,task_id,fed\ndemo,example-model,dual-loop,t1,\u00b2\n", "utf-8")
    line = one_error(*run(capsys, "crosscheck", str(plain), demo, "--their-rollouts", str(rollouts)))
    assert "column fed: not a non-negative integer" in line


@pytest.mark.spec("HOSTILE-DIGITS", "SAMPLE-TASKLIST-BFCL")
def test_a_superscript_two_in_a_bfcl_id_is_ordered_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tasks.txt"
    path.write_text("multi_turn_base_\u00b2\nmulti_turn_base_10\nmulti_turn_base_2\n", encoding="utf-8")
    code, out, err = run(capsys, "sample", "--size", "3", "--format", "bfcl", "--tasks", str(path))
    assert code == 0, err
    # numbered ids by their number (2 before 10), an id whose tail is no number first (-1)
    assert json.loads(out) == {
        "multi_turn_base": ["multi_turn_base_\u00b2", "multi_turn_base_2", "multi_turn_base_10"]
    }


# ------------------------------------------------------------------------------------------
# HOSTILE-LINES: a task list ends its lines at "\n" only


@pytest.mark.spec("HOSTILE-LINES", "SAMPLE-TASKLIST-TOOLSANDBOX")
def test_sample_tasks_breaks_lines_at_newline_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tasks.txt"
    # two task ids that hold U+2028, U+0085, a form feed and a lone CR: splitlines() made six
    path.write_text("a\u2028b\u0085c\n\x0cd\re\n", encoding="utf-8")
    code, out, err = run(capsys, "sample", "--size", "10", "--tasks", str(path))
    assert code == 0, err
    assert sorted(out.split("\n")[:-1]) == ["a\u2028b\u0085c", "d\re"]  # strip() took the leading \x0c
    assert "sampled 2 of 2 tasks" in err


# ------------------------------------------------------------------------------------------
# HOSTILE-SHELL: printed commands quote what came from the input


@pytest.mark.spec("HOSTILE-SHELL", "SAMPLE-TASKLIST-TAU2")
def test_the_runner_hint_quotes_a_domain_from_the_task_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    domain = "x$(touch PWNED)`touch PWNED2`;touch PWNED3"
    tasks = tau2_tasks(tmp_path, domain)
    code, _, err = run(capsys, "sample", "--size", "2", "--output", str(tmp_path / "ids.txt"), str(tasks))
    assert code == 0, err
    (hint,) = [
        line.removeprefix("prefixexec: run them with: ")
        for line in err.splitlines()
        if "run them with" in line
    ]
    words = shlex.split(hint)
    assert words[:4] == ["tau2", "run", "--domain", domain]
    # Pasted into a shell (with tau2 a function that does nothing), it runs nothing it holds.
    done = subprocess.run(
        ["sh", "-c", f"tau2() {{ :; }}; {hint}"], cwd=tmp_path, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("PWNED")]


# ------------------------------------------------------------------------------------------
# HOSTILE-COUNT-COST: a long cell of brackets in audit-table (the pattern was quadratic)


@pytest.mark.spec("HOSTILE-COUNT-COST", "AUDIT-TABLE-CSV")
def test_a_long_cell_of_brackets_in_audit_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The real table's first row with its TER cell followed by 100,000 opening brackets (csv
    # refuses cells over 128 KiB): the old pattern tried each of them to the end of the cell
    # (100 KB took 45 s); one pass now.
    head, first, *_ = (DATA / "paper_table2.csv").read_text(encoding="utf-8").split("\n")
    row = first.replace('"0.69 [0.63, 0.76]"', '"0.69 ' + "(" * 100_000 + '"', 1)
    assert row != first
    path = tmp_path / "t.csv"
    path.write_text(f"{head}\n{row}\n", encoding="utf-8")
    line = one_error(*run(capsys, "audit-table", str(path)))
    assert "t.csv:2: column TER: not a non-negative decimal number" in line


# ------------------------------------------------------------------------------------------
# HOSTILE-ZIP-OVERLAP: members of an .eval archive that share bytes


def _with_extra_entries(data: bytes, copies: int) -> bytes:
    """``data`` (a ZIP without a comment) whose central directory lists ``copies`` more entries,
    each a copy of the first entry under another name: they point at the first member's bytes."""
    import struct

    eocd = data.rindex(b"PK\x05\x06")
    disk, cd_disk, here, total, size, offset = struct.unpack("<HHHHII", data[eocd + 4 : eocd + 20])
    first = data[offset : offset + 46]
    n, m, k = struct.unpack("<HHH", first[28:34])
    name = data[offset + 46 : offset + 46 + n]
    rest = data[offset + 46 + n : offset + 46 + n + m + k]
    extra = b""
    for i in range(copies):
        other = b"samples/copy_%d_" % i + name
        extra += first[:28] + struct.pack("<H", len(other)) + first[30:] + other + rest
    directory = data[offset : offset + size] + extra
    tail = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", disk, cd_disk, here + copies, total + copies, len(directory), offset, 0
    )
    return data[:offset] + directory + tail


@pytest.mark.spec("HOSTILE-ZIP-OVERLAP", "HOSTILE-ZIP")
@pytest.mark.parametrize("copies", [1, 300])
def test_eval_members_that_share_bytes_are_refused(
    copies: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import zipfile

    real = next(p for p in sorted((REAL / "inspect").iterdir()) if p.suffix == ".eval")
    data = real.read_bytes()
    assert data.endswith(b"\0\0") or b"PK\x05\x06" in data[-22:]  # no archive comment to carry over
    path = tmp_path / "log.eval"
    path.write_bytes(_with_extra_entries(data, copies))
    with zipfile.ZipFile(path) as archive:  # Python 3.11's zipfile lists them all
        assert len(archive.namelist()) == len(zipfile.ZipFile(real).namelist()) + copies
    line = one_error(*run(capsys, "score", "--adapter", "inspect", "--bootstrap", "0", str(path)))
    assert "HOSTILE-ZIP-OVERLAP" in line
    code, _, err = run(capsys, "score", "--adapter", "inspect", "--bootstrap", "0", str(real))
    assert code == 0, err  # the archive it was made from is read


# ------------------------------------------------------------------------------------------
# HOSTILE-OUTPUT-SPECIAL and LB-OUTPUT agree: a FIFO output is written directly, never waited for


@pytest.mark.spec("HOSTILE-OUTPUT-SPECIAL", "LB-OUTPUT")
def test_leaderboard_output_to_a_fifo_never_blocks(tmp_path: Path) -> None:
    import os
    import sys
    import threading

    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    run_ = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
    argv = [
        sys.executable,
        "-m",
        "prefixexec",
        "leaderboard",
        "--quiet",
        "--bootstrap",
        "0",
        "--output",
        str(fifo),
        str(run_),
    ]
    # No reader: one error line (before, the open waited for a reader for ever; the time limit
    # stands in for "for ever" here and is never reached by the fixed code).
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "is a FIFO that no one reads" in done.stderr
    # With a reader: the table goes through the FIFO.
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as handle:
            got.append(handle.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the command may reach its write before the reader opened: retry until the reader is there
    _, err = proc.communicate(timeout=120)
    while proc.returncode == 2 and "no one reads" in err and thread.is_alive():
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, err = proc.communicate(timeout=120)
    thread.join(timeout=60)
    assert proc.returncode == 0, err
    assert got and b"signature:" in got[0]


@pytest.mark.spec("API-ERRORS")
@pytest.mark.parametrize("select", [b"task_id=t1", [b"task_id=t1"], 7])
def test_the_api_refuses_a_select_that_is_not_text(select: object) -> None:
    import prefixexec

    with pytest.raises(TypeError, match="'select' must be a string or a sequence of strings"):
        prefixexec.score(str(REPO / "examples" / "demo.jsonl"), select=select, bootstrap=0)


# ------------------------------------------------------------------------------------------
# HOSTILE-ERROR-PATH: error paths that fail again, or blame the wrong file


@pytest.mark.spec("HOSTILE-ERROR-PATH", "HOSTILE-NOTICE")
@pytest.mark.parametrize("option", ["--emit-evaluations", "--output"])
def test_a_failed_write_names_its_output_and_prints_no_table(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # /dev/full: every write fails with ENOSPC, as on a full disk. Before, --emit-evaluations
    # printed the whole table and then blamed "input: cannot read or write".
    import os

    if not os.path.exists("/dev/full"):
        pytest.fail("this test needs Linux's /dev/full")
    line = one_error(
        *run(capsys, "score", "--adapter", "otel", "--bootstrap", "0", option, "/dev/full", str(OTEL))
    )
    assert line == "prefixexec: error: /dev/full: cannot write: No space left on device"


@pytest.mark.spec("HOSTILE-ERROR-PATH", "DETECT-HINT")
def test_the_format_hint_does_not_fail_again_on_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A chat transcript read as records fails; the hint then reads the file to say what it looks
    # like. Under a memory cap that read raised MemoryError again, out of the error path: a
    # traceback. The cap is stood in for by a detect() that raises it.
    from prefixexec.adapters import detect

    path = tmp_path / "c.jsonl"
    path.write_text(
        (DATA / "chat" / "transcripts.jsonl").read_text(encoding="utf-8").split("\n")[0] + "\n", "utf-8"
    )
    code, out, err = run(capsys, "score", "--adapter", "records", str(path))
    assert "looks like" in one_error(code, out, err)  # the hint, when memory allows

    def no_memory(*_: object, **__: object) -> object:
        raise MemoryError

    monkeypatch.setattr(detect, "detect", no_memory)
    line = one_error(*run(capsys, "score", "--adapter", "records", str(path)))
    assert "looks like" not in line
