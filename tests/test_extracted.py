"""The reference scorer extracted from the Coq definitions (issue 19).

``bash proofs/check.sh`` compiles proofs/*.v, extracts ``Reference.score`` to OCaml
(proofs/Extract.v) and builds it with the hand-written driver proofs/extracted/driver.ml into
``proofs/extracted/score``; the module fixture below runs it (``--no-conformance``: this file
runs the vectors itself) so the binary under test is always built from the committed sources
(check.sh skips the build only when its stamp shows the binary came from these very inputs).
The tests compare the binary with the Python scorer: on every conformance vector (CONF-RUN,
and byte for byte with ``score --json --bootstrap 0``), on random record sets (Hypothesis),
and on bad input, which both must reject with exit status 2 at the same line (REC-ERRORS).
Python's signature line is the one line allowed to differ.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.cli import main
from prefixexec.conformance import compare_condition, load_vectors, vector_jsonl

from conftest import REPO

PROOFS = REPO / "proofs"
SCORE = PROOFS / "extracted" / "score"
VECTORS = load_vectors([REPO / "spec" / "vectors"])
LABELS = ["schema", "dependency", "precondition", "state_consistency", "information"]
# The limit on T (and on the number of actions) that driver.ml states as max_horizon.
MAX_HORIZON = 10_000


@pytest.fixture(scope="module")
def score() -> Path:
    proc = subprocess.run(
        ["bash", str(PROOFS / "check.sh"), "--no-conformance"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, f"proofs/check.sh failed:\n{proc.stdout}\n{proc.stderr}"
    # check.sh reuses the binary only when its stamp says it was built and checked from the same
    # proofs, driver, axioms line and tools (tests/run.sh's own check.sh run usually built it).
    assert (
        "built proofs/extracted/score" in proc.stdout
        or "proofs/extracted/score is up to date" in proc.stdout
    ), proc.stdout
    return SCORE


def run_extracted(binary: Path, text: str | bytes, *args: str) -> tuple[int, bytes, str]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    proc = subprocess.run([str(binary), *args], input=data, capture_output=True, timeout=120, check=False)
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")


def run_python(text: str | bytes) -> tuple[int, bytes, str]:
    """``prefixexec score --json --bootstrap 0 FILE`` in this process: (status, stdout, stderr)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    with tempfile.TemporaryDirectory(prefix="prefixexec-extracted-") as tmp:
        path = Path(tmp) / "records.jsonl"
        path.write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = main(["score", "--json", "--bootstrap", "0", str(path)])
    return status, out.getvalue().encode("utf-8"), err.getvalue()


def without_signature(document: bytes) -> bytes:
    lines = document.split(b"\n")
    assert lines[0] == b"{" and lines[1].startswith(b'  "signature": '), document[:200]
    return b"\n".join(lines[:1] + lines[2:])


def error_line(stderr: str) -> int | None:
    """The line number that an error message names (``FILE:LINE: what``), if any."""
    match = re.search(r":(\d+): ", stderr)
    return int(match.group(1)) if match else None


# ---------------------------------------------------------------------------------------------
# Every conformance vector


@pytest.mark.spec("CONF-REFERENCE", "CONF-RUN", "CONF-COMPARE", "OUT-JSON", "CONV-EXACT")
def test_every_vector_agrees_and_matches_python_byte_for_byte(score: Path) -> None:
    assert len(VECTORS) >= 313  # spec/vectors/ as generated (CONF-COVERAGE)
    for vector in VECTORS:
        text = vector_jsonl(vector)
        status, out, err = run_extracted(score, text)
        assert status == 0, f"{vector.id}: {err}"
        doc = json.loads(out)
        assert len(doc["conditions"]) == 1
        differences = compare_condition(vector.expected, doc["conditions"][0], 1e-9)
        assert differences == [], f"{vector.id}: {[d.describe() for d in differences]}"
        py_status, py_out, py_err = run_python(text)
        assert py_status == 0, py_err
        assert without_signature(out) == without_signature(py_out), vector.id


@pytest.mark.spec("CONF-REFERENCE", "CONF-RUN")
def test_conformance_command_runs_the_binary(score: Path) -> None:
    # The command, on the edge cases and the paper's example (check.sh runs all).
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["conformance", "--command", str(score), "--only", "edge-*", "--only", "paper-*"])
    # 12 edge-*.json files + paper-worked-example.json (ls spec/vectors | grep -c -E '^(edge|paper)-')
    assert status == 0, out.getvalue() + err.getvalue()
    assert out.getvalue().strip().endswith("13 of 13 vectors agree, 0 differ")


# ---------------------------------------------------------------------------------------------
# Random record sets

NAMES = ["d", "bench", "é", "日本", "a b", 'q"uote', "back\\slash", "tab\there", "🙂", "\u2028", "Z"]


@st.composite
def labels_field(draw: st.DrawFn) -> str | list[str]:
    if draw(st.booleans()):
        return draw(st.sampled_from(LABELS))
    return draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=4))


@st.composite
def action(draw: st.DrawFn) -> dict[str, Any]:
    a: dict[str, Any] = {"tool": draw(st.sampled_from(["search", "book", "cd", "ls"]))}
    if draw(st.booleans()):
        a["arguments"] = {"x": draw(st.integers(-3, 3))}
    executable = draw(st.booleans())
    a["executable"] = executable
    if not executable and draw(st.booleans()):
        a["label"] = draw(labels_field())
    if not executable and draw(st.booleans()):
        a["reason"] = "rejected"
    return a


@st.composite
def record(draw: st.DrawFn, key: tuple[str, str, str, str | int, int]) -> dict[str, Any]:
    dataset, model, method, task, trial = key
    r: dict[str, Any] = {"dataset": dataset, "model": model, "method": method, "task_id": task}
    if trial != 0 or draw(st.booleans()):
        r["trial"] = trial
    r["success"] = draw(st.booleans())
    if draw(st.booleans()):
        r["actions"] = draw(st.lists(action(), max_size=7))
        if not r["actions"] or draw(st.booleans()):
            r["no_tool_allowed"] = draw(st.booleans())
    else:
        T = draw(st.integers(1, 12))
        fed = draw(st.integers(1, T + 1))
        outcome: dict[str, Any] = {"T": T, "fed": fed}
        if fed <= T and draw(st.booleans()):
            outcome["label"] = draw(labels_field())
        if fed <= T and draw(st.booleans()):
            outcome["reason"] = "replayed elsewhere"
        r["outcome"] = outcome
    if draw(st.booleans()):
        r["cost"] = {"tokens": draw(st.integers(0, 9)), "latency_s": 0.5}
    if draw(st.booleans()):
        r["meta"] = {"note": [1, None, "x"]}
    return r


@st.composite
def record_sets(draw: st.DrawFn) -> list[dict[str, Any]]:
    conditions = draw(
        st.lists(st.tuples(*[st.sampled_from(NAMES)] * 3), min_size=1, max_size=3, unique=True)
    )
    keys = draw(
        st.lists(
            st.tuples(
                st.sampled_from(conditions),
                st.one_of(st.sampled_from(["a", "b", "c", "日"]), st.integers(0, 5)),
                st.integers(0, 2),
            ),
            min_size=1,
            max_size=25,
            # REC-UNIQUE: an integer task id is the string of its digits
            unique_by=lambda k: (k[0], str(k[1]), k[2]),
        )
    )
    return [draw(record((*cond, task, trial))) for cond, task, trial in keys]


def jsonl(records: list[dict[str, Any]], ascii_only: bool) -> str:
    return "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records)


@pytest.mark.spec("OUT-JSON", "CONV-EXACT", "REC-FORMAT", "CONV-NOTOOL", "CONV-LABEL-ORDER", "REC-UNIQUE")
@given(records=record_sets(), ascii_only=st.booleans(), blank=st.booleans())
def test_random_records_score_byte_for_byte_as_python(
    score: Path, records: list[dict[str, Any]], ascii_only: bool, blank: bool
) -> None:
    text = jsonl(records, ascii_only)
    if blank:
        text = "\n  \n" + text.replace("\n", "\r\n", 1)  # blank lines are skipped; \r\n ends a line
    status, out, err = run_extracted(score, text)
    py_status, py_out, py_err = run_python(text)
    assert (status, py_status) == (0, 0), err + py_err
    assert without_signature(out) == without_signature(py_out)


# ---------------------------------------------------------------------------------------------
# Bad input (REC-ERRORS): both reject it, at the same line, and the binary prints nothing

BASE = {"dataset": "d", "model": "m", "method": "x", "task_id": "a", "success": True}


def line(**changes: Any) -> str:
    rec = {**BASE, "outcome": {"T": 3, "fed": 2}}
    rec.update(changes)
    return json.dumps({k: v for k, v in rec.items() if v is not None})


FAULTS = {
    "not JSON": "{not json",
    "NaN": line(cost={"tokens": float("nan")}),
    "Infinity": '{"dataset": "d", "model": "m", "method": "x", "task_id": "a", "success": true, '
    '"outcome": {"T": 3, "fed": 2}, "cost": {"tokens": Infinity}}',
    "repeated key": '{"dataset": "d", "dataset": "e", "model": "m", "method": "x", "task_id": "a", '
    '"success": true, "outcome": {"T": 3, "fed": 2}}',
    "not an object": "[1, 2]",
    "trailing data": line() + " 1",
    "missing success": line(success=None),
    "missing dataset": line(dataset=None),
    "empty dataset": line(dataset=""),
    "unknown key": line(extra=1),
    "misspelt key": line(sucess=True),
    "success not boolean": line(success=1),
    "both actions and outcome": line(actions=[]),
    "neither actions nor outcome": line(outcome=None),
    "fed beyond T + 1": line(outcome={"T": 3, "fed": 5}),
    "fed 0": line(outcome={"T": 3, "fed": 0}),
    "T 0": line(outcome={"T": 0, "fed": 1}),
    "T not an integer": line(outcome={"T": "3", "fed": 2}),
    "label on an executable outcome": line(outcome={"T": 3, "fed": 4, "label": "schema"}),
    "reason on an executable outcome": line(outcome={"T": 3, "fed": 4, "reason": "x"}),
    "unknown label": line(outcome={"T": 3, "fed": 2, "label": "syntax"}),
    "empty label list": line(outcome={"T": 3, "fed": 2, "label": []}),
    "unknown outcome key": line(outcome={"T": 3, "fed": 2, "why": "x"}),
    "label on an executable action": line(
        outcome=None, actions=[{"tool": "a", "executable": True, "label": "schema"}]
    ),
    "action without executable": line(outcome=None, actions=[{"tool": "a"}]),
    "action with an empty tool": line(outcome=None, actions=[{"tool": "", "executable": True}]),
    "action with an unknown key": line(outcome=None, actions=[{"tool": "a", "executable": True, "x": 1}]),
    "arguments not an object": line(
        outcome=None, actions=[{"tool": "a", "executable": True, "arguments": []}]
    ),
    "negative trial": line(trial=-1),
    "task_id a boolean": line(task_id=True),
    "negative cost": line(cost={"tokens": -1}),
    "unknown cost key": line(cost={"dollars": 1}),
    "meta not an object": line(meta=[]),
    "no_tool_allowed not boolean": line(outcome=None, actions=[], no_tool_allowed="yes"),
}


@pytest.mark.spec("REC-ERRORS", "REC-FORMAT", "REC-OUTCOME")
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_bad_records_are_rejected_at_the_same_line(score: Path, fault: str) -> None:
    good = line(task_id="z")
    text = f"{good}\n\n{FAULTS[fault]}\n{good.replace('z', 'y')}\n"  # the fault is on line 3
    status, out, err = run_extracted(score, text)
    py_status, py_out, py_err = run_python(text)
    assert py_status == 2, f"Python accepts {fault!r}: {py_out[:200]!r}"
    assert status == 2, f"the extracted scorer accepts {fault!r}: {out[:200]!r}"
    assert out == b"", "bad input must print no numbers"
    assert err.startswith("score: error: <stdin>:3: "), err
    assert err.count("\n") == 1, err
    assert error_line(py_err) == 3, py_err


@pytest.mark.spec("REC-UNIQUE", "REC-ERRORS")
def test_a_repeated_rollout_key_is_rejected(score: Path) -> None:
    # task_id 7 and "7" are the same task (REC-FORMAT: compared as a string); line 2 repeats line 1.
    first = line(task_id=7)
    text = f"{first}\n{line(task_id='7', success=False)}\n"
    status, out, err = run_extracted(score, text)
    assert (status, out) == (2, b"")
    assert err.startswith("score: error: <stdin>:2: repeats the key") and "<stdin>:1" in err
    assert run_python(text)[0] == 2
    # Another trial of the same task is another rollout.
    assert run_extracted(score, f"{first}\n{line(task_id='7', trial=1)}\n")[0] == 0


@pytest.mark.spec("REC-ERRORS")
def test_empty_input_and_non_utf8_are_rejected(score: Path) -> None:
    for text in (b"", b"\n \n", line().encode() + b"\n" + b'{"dataset": "\xff"}\n'):
        status, out, err = run_extracted(score, text)
        assert (status, out) == (2, b""), text
        assert err.startswith("score: error: <stdin>"), err
        assert run_python(text)[0] == 2


def test_horizon_limit_and_usage(score: Path) -> None:
    # Coq's nat is unary, so the driver refuses T > MAX_HORIZON (and as many actions) with a
    # message instead of running for hours; T = MAX_HORIZON itself is scored.
    ok = line(outcome={"T": MAX_HORIZON, "fed": MAX_HORIZON + 1})
    status, out, _ = run_extracted(score, ok + "\n")
    assert status == 0
    assert json.loads(out)["conditions"][0]["mean_FED"] == MAX_HORIZON + 1
    status, out, err = run_extracted(score, line(outcome={"T": MAX_HORIZON + 1, "fed": 1}) + "\n")
    assert (status, out) == (2, b"")
    assert "limit of 10000" in err
    actions = [{"tool": "t", "executable": True}] * (MAX_HORIZON + 1)
    status, out, err = run_extracted(score, line(outcome=None, actions=actions) + "\n")
    assert (status, out) == (2, b"") and "limit of 10000" in err
    status, out, err = run_extracted(score, ok + "\n", "--bootstrap", "5")
    assert (status, out) == (2, b"") and err.startswith("usage: score")
