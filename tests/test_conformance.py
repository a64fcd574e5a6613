"""Conformance vectors (spec/vectors/) and `prefixexec conformance` (spec/conformance.md)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import InputError
from prefixexec.cli import main
from prefixexec.conformance import compare_condition, load_vector, load_vectors, vector_rollouts
from prefixexec.inference import evaluate
from prefixexec.scoring import condition_json

import naive
from conftest import REPO

VECTORS = REPO / "spec" / "vectors"
VECTOR_FILES = sorted(VECTORS.glob("*.json"))
ALL = load_vectors([VECTORS])
BY_ID = {v.id: v for v in ALL}
ORDER = ["schema", "dependency", "precondition", "state_consistency", "information"]
PY = shlex.quote(sys.executable)
OURS = f"{PY} -m prefixexec score --json --bootstrap 0 -"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------------
# The vectors themselves


@pytest.mark.spec("CONF-VECTORS", "OUT-JSON")
@pytest.mark.parametrize("vector_id", sorted(BY_ID))
def test_library_reproduces_every_vector(vector_id: str) -> None:
    """The kernel's own run of every vector: records -> reader -> kernel -> condition object."""
    vector = BY_ID[vector_id]
    (result,) = evaluate(vector_rollouts(vector), None)
    assert condition_json(result.key, result.metrics) == vector.expected


def _primary(label: Any) -> str | None:
    if label is None:
        return None
    names = [label] if isinstance(label, str) else list(label)
    return min(names, key=ORDER.index)


def _naive_rollouts(vector_id: str) -> list[tuple[int, int, bool, str | None]]:
    """(T, FED, Y, primary label) of every rollout, derived without the package's reader."""
    doc = json.loads((VECTORS / f"{vector_id}.json").read_text(encoding="utf-8"))
    if "triples" in doc:
        return [(T, fed, bool(y), None) for T, fed, y in doc["triples"]]
    out = []
    for rec in doc["records"]:
        y = rec["success"]
        if "outcome" in rec:
            o = rec["outcome"]
            out.append((o["T"], o["fed"], y, _primary(o.get("label")) if o["fed"] <= o["T"] else None))
        elif not rec["actions"]:  # the terminal no-tool action (CONV-NOTOOL)
            allowed = rec.get("no_tool_allowed", False)
            out.append((1, 2 if allowed else 1, y, None))
        else:
            verdicts = [a["executable"] for a in rec["actions"]]
            fed = naive.fed_of(verdicts)
            label = _primary(rec["actions"][fed - 1].get("label")) if fed <= len(verdicts) else None
            out.append((len(verdicts), fed, y, label))
    return out


def _s(value: Fraction | None) -> str | None:
    return None if value is None else str(value)


@pytest.mark.spec("CONF-COVERAGE", "INV-NAIVE")
@pytest.mark.parametrize("vector_id", sorted(BY_ID))
def test_every_vector_agrees_with_the_naive_transcription(vector_id: str) -> None:
    """expected was written by the package; tests/naive.py shares no code with it."""
    rollouts = _naive_rollouts(vector_id)
    triples = [(T, fed, y) for T, fed, y, _ in rollouts]
    e = BY_ID[vector_id].expected
    x = e["exact"]
    max_t = max(T for T, _, _ in triples)
    assert e["N"] == len(triples)
    assert x["TER"] == str(naive.ter(triples))
    assert x["AUC_PEC"] == str(naive.auc_pec(triples))
    assert x["mean_FED"] == str(naive.mean_fed(triples))
    assert x["success"] == str(naive.success(triples))
    assert x["RR"] == _s(naive.rr(triples))
    assert e["RR_eligible"] == naive.rr_eligible(triples)
    assert e["recovered"] == sum(1 for T, fed, y in triples if y and fed <= T)
    assert e["fully_executable"] == sum(1 for T, fed, _ in triples if fed == T + 1)
    assert x["PEC"] == [str(naive.pec(triples, k)) for k in range(1, max_t + 1)]
    assert x["PEC_elig"] == [_s(naive.pec_elig(triples, k)) for k in range(1, max_t + 1)]
    assert e["n_k"] == [naive.n_k(triples, k) for k in range(1, max_t + 1)]
    assert x["decomposition"]["s"] == _s(naive.s_given_executable(triples))
    assert e["decomposition"]["uninterrupted"] == sum(1 for T, fed, y in triples if y and fed == T + 1)
    failing = [label for T, fed, _, label in rollouts if fed <= T]
    want = {name: sum(1 for lab in failing if lab == name) for name in ORDER}
    want["unlabelled"] = sum(1 for lab in failing if lab is None)
    assert e["labels"] == want
    # every float is the double nearest to its exact rational (CONV-EXACT)
    for key in ("TER", "AUC_PEC", "mean_FED", "success", "RR"):
        assert e[key] == (None if x[key] is None else float(Fraction(x[key])))
    for key in ("PEC", "PEC_elig"):
        assert e[key] == [None if v is None else float(Fraction(v)) for v in x[key]]


def _pec_long() -> list[str]:
    # edge-long-horizon, by hand: FEDs 1001, 500, 401, 1. FED > k for three rollouts while
    # k <= 400, for two while k <= 499, for one while k <= 1000.
    return ["3/4"] * 400 + ["1/2"] * 99 + ["1/4"] * 501


#: Hand computations of the edge cases and the paper example (see each comment).
HAND: dict[str, dict[str, Any]] = {
    # [[3, 2, 1]]: survives depth 1 only; area (2-1)/3; one eligible, recovered.
    "edge-n1": {
        "N": 1, "TER": "0", "AUC_PEC": "1/3", "mean_FED": "2", "success": "1", "RR": "1", "RR_eligible": 1,
        "PEC": ["1", "0", "0"], "PEC_elig": ["1", "0", "0"], "n_k": [1, 1, 1], "s": None, "unlabelled": 1,
    },
    # [[1, 2, 0]]: executable, failed task: s = 0/1, RR undefined.
    "edge-n1-executable": {
        "N": 1, "TER": "1", "AUC_PEC": "1", "mean_FED": "2", "success": "0", "RR": None, "RR_eligible": 0,
        "PEC": ["1"], "PEC_elig": ["1"], "n_k": [1], "s": "0", "unlabelled": 0,
    },
    # FEDs 3, 6, 2 (T 2, 5, 1): PEC(k) = #{FED > k}/3 = 1, 2/3, 1/3, 1/3, 1/3; n_k = 3, 2, 1, 1, 1.
    "edge-no-eligible": {
        "N": 3, "TER": "1", "AUC_PEC": "1", "mean_FED": "11/3", "success": "2/3", "RR": None,
        "RR_eligible": 0, "PEC": ["1", "2/3", "1/3", "1/3", "1/3"], "PEC_elig": ["1"] * 5,
        "n_k": [3, 2, 1, 1, 1], "s": "2/3", "unlabelled": 0,
    },
    "edge-all-executable": {
        "N": 5, "TER": "1", "AUC_PEC": "1", "mean_FED": "5", "success": "1", "RR": None, "RR_eligible": 0,
        "PEC": ["1"] * 4, "PEC_elig": ["1"] * 4, "n_k": [5] * 4, "s": "1", "unlabelled": 0,
    },
    # T 1, 3, 5, 2, all FED 1; Y 0, 1, 0, 1: RR = 2/4; n_k = #{T >= k} = 4, 3, 2, 1, 1.
    "edge-all-fail-depth1": {
        "N": 4, "TER": "0", "AUC_PEC": "0", "mean_FED": "1", "success": "1/2", "RR": "1/2", "RR_eligible": 4,
        "PEC": ["0"] * 5, "PEC_elig": ["0"] * 5, "n_k": [4, 3, 2, 1, 1], "s": None, "unlabelled": 4,
    },
    # no-tool allowed twice (T 1, FED 2, Y 1 and 0) and two executable calls (T 2, FED 3, Y 1).
    "edge-notool-allowed": {
        "N": 3, "TER": "1", "AUC_PEC": "1", "mean_FED": "7/3", "success": "2/3", "RR": None, "RR_eligible": 0,
        "PEC": ["1", "1/3"], "PEC_elig": ["1", "1"], "n_k": [3, 1], "s": "2/3", "unlabelled": 0,
    },
    # no-tool refused twice (T 1, FED 1, unlabelled; Y 0 and 1), login then a schema rejection
    # (T 2, FED 2, Y 0): area (0 + 0 + 1/2)/3, RR = 1/3.
    "edge-notool-refused": {
        "N": 3, "TER": "0", "AUC_PEC": "1/6", "mean_FED": "4/3", "success": "1/3", "RR": "1/3",
        "RR_eligible": 3, "PEC": ["1/3", "0"], "PEC_elig": ["1/3", "0"], "n_k": [3, 1], "s": None,
        "unlabelled": 2, "schema": 1,
    },
    # T = 1; FEDs 2, 1, 2, 1, 2; Y 1, 0, 0, 1, 1: TER = PEC(1) = AUC = 3/5, RR = 1/2, s = 2/3.
    "edge-t1-everywhere": {
        "N": 5, "TER": "3/5", "AUC_PEC": "3/5", "mean_FED": "8/5", "success": "3/5", "RR": "1/2",
        "RR_eligible": 2, "PEC": ["3/5"], "PEC_elig": ["3/5"], "n_k": [5], "s": "2/3", "unlabelled": 2,
    },
    # (1000, 1001, 1), (997, 500, 0), (400, 401, 1), (1, 1, 0): area (1 + 499/997 + 1 + 0)/4 =
    # 2493/3988; mean FED 1903/4; n_k = 4, then 3 up to 400, 2 up to 997, 1 up to 1000.
    "edge-long-horizon": {
        "N": 4, "TER": "1/2", "AUC_PEC": "2493/3988", "mean_FED": "1903/4", "success": "1/2", "RR": "0",
        "RR_eligible": 2, "PEC": _pec_long(), "n_k": [4] + [3] * 399 + [2] * 597 + [1] * 3,
        "PEC_elig": ["3/4"] + ["1"] * 498 + ["1/2"] * 498 + ["1"] * 3, "s": "1", "unlabelled": 2,
    },
    # a0 (3, 4, 1), a1 (3, 2, 0, precondition), a2 (2, 1, 1, schema), b0 (5, 6, 0), b1 (4, 3, 1):
    # area (1 + 1/3 + 0 + 1 + 2/4)/5 = 17/30; n_k = 5, 5, 4, 2, 1; survivors 4, 3, 2, 1, 1.
    "edge-trials": {
        "N": 5, "TER": "2/5", "AUC_PEC": "17/30", "mean_FED": "16/5", "success": "3/5", "RR": "2/3",
        "RR_eligible": 3, "PEC": ["4/5", "3/5", "2/5", "1/5", "1/5"],
        "PEC_elig": ["4/5", "3/5", "1/2", "1/2", "1"], "n_k": [5, 5, 4, 2, 1], "s": "1/2",
        "unlabelled": 1, "schema": 1, "precondition": 1,
    },
    # t1 (3, 2, dependency), t2 (1, 1, schema), t3 (3, 3, state_consistency), t4 (2, 1,
    # information: the second rejection is never replayed), t5 (2, 2, unlabelled), t6 (2, 3,
    # executable), t7 (1, 1, precondition); successes t1, t4, t6. Area (1/3 + 2/3 + 1/2 + 1)/7.
    "edge-label-ties": {
        "N": 7, "TER": "1/7", "AUC_PEC": "5/14", "mean_FED": "13/7", "success": "3/7", "RR": "1/3",
        "RR_eligible": 6, "PEC": ["4/7", "2/7", "0"], "PEC_elig": ["4/7", "2/5", "0"], "n_k": [7, 5, 2],
        "s": "1", "unlabelled": 1, "schema": 1, "dependency": 1, "precondition": 1,
        "state_consistency": 1, "information": 1,
    },
    # three (1, 1, 0) and one (2, 3, 1): PEC_elig rises from 1/4 to 1/1 while PEC stays 1/4.
    "edge-pec-elig-nonmonotone": {
        "N": 4, "TER": "1/4", "AUC_PEC": "1/4", "mean_FED": "3/2", "success": "1/4", "RR": "0",
        "RR_eligible": 3, "PEC": ["1/4", "1/4"], "PEC_elig": ["1/4", "1"], "n_k": [4, 1], "s": "1",
        "unlabelled": 3,
    },
    # Paper section 3.1: TER = 10/200, RR = 138/190, success = 148/200. With T = 6 and failing FED
    # 1 + i % 6 (i < 190; residues 0-3 occur 32 times, 4-5 31 times): sum FED = 70 + 190 + 471,
    # area = 10 + 471/6, PEC(k) = (10 + #{i % 6 >= k}) / 200 = 168, 136, 104, 72, 41, 10 over 200.
    "paper-worked-example": {
        "N": 200, "TER": "1/20", "AUC_PEC": "177/400", "mean_FED": "731/200", "success": "37/50",
        "RR": "69/95", "RR_eligible": 190, "PEC": ["21/25", "17/25", "13/25", "9/25", "41/200", "1/20"],
        "PEC_elig": ["21/25", "17/25", "13/25", "9/25", "41/200", "1/20"], "n_k": [200] * 6, "s": "1",
        "unlabelled": 190,
    },
}  # fmt: skip


@pytest.mark.spec("CONF-COVERAGE", "REG-PAPER-EXAMPLE")
@pytest.mark.parametrize("vector_id", sorted(HAND))
def test_edge_cases_and_paper_example_by_hand(vector_id: str) -> None:
    e = BY_ID[vector_id].expected
    hand = HAND[vector_id]
    for key in ("TER", "AUC_PEC", "mean_FED", "success", "RR", "PEC", "PEC_elig"):
        assert e["exact"][key] == hand[key], key
    for key in ("N", "RR_eligible", "n_k"):
        assert e[key] == hand[key], key
    assert e["exact"]["decomposition"]["s"] == hand["s"]
    for label in (*ORDER, "unlabelled"):
        assert e["labels"][label] == hand.get(label, 0), label


def test_every_edge_and_paper_vector_has_a_hand_computation() -> None:
    assert {v for v in BY_ID if not v.startswith("random-")} == set(HAND)


@pytest.mark.spec("CONF-COVERAGE")
def test_the_vectors_cover_what_the_issue_asks() -> None:
    exp = [v.expected for v in ALL]
    records = [r for v in ALL if v.form == "records" for r in v.records]
    assert sum(1 for v in ALL if v.id.startswith("random-")) >= 300
    assert any(e["N"] == 1 for e in exp)
    assert any(e["RR_eligible"] == 0 for e in exp)  # no eligible rollout, RR undefined
    assert any(e["fully_executable"] == e["N"] and e["exact"]["success"] == "1" for e in exp)
    assert any(e["exact"]["mean_FED"] == "1" for e in exp)  # every rollout fails at depth 1
    assert any(r.get("actions") == [] and r.get("no_tool_allowed") is True for r in records)
    assert any(r.get("actions") == [] and not r.get("no_tool_allowed", False) for r in records)
    assert any(len(e["PEC"]) == 1 and e["N"] > 1 for e in exp)  # T = 1 everywhere
    assert max(len(e["PEC"]) for e in exp) >= 1000
    assert any(r.get("trial", 0) > 0 for r in records)
    assert any(
        isinstance(a.get("label"), list) and len(a["label"]) > 1
        for r in records
        for a in r.get("actions", [])
    )
    assert any(isinstance(r["task_id"], int) for r in records)
    assert any(v.id.startswith("paper-") for v in ALL)


@pytest.mark.spec("CONF-COVERAGE")
def test_generator_rewrites_the_committed_vectors_byte_for_byte(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(VECTORS / "generate.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    fresh = {p.name: p.read_bytes() for p in tmp_path.glob("*.json")}
    committed = {p.name: p.read_bytes() for p in VECTOR_FILES}
    assert sorted(fresh) == sorted(committed)
    assert [name for name in fresh if fresh[name] != committed[name]] == []


# ---------------------------------------------------------------------------------------------
# Loading vectors


def _write_vector(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.spec("CONF-VECTORS")
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"triples": [[2, 4, 1]]}, "1 <= FED <= T + 1"),
        ({"triples": [[2, 1, 2]]}, "Y in {0, 1}"),
        ({"triples": [[2, 1, True]]}, "integers"),
        ({"triples": []}, "non-empty list"),
        ({"id": "other"}, "differs from the file name"),
        ({"extra": 1}, "unknown key(s) extra"),
        ({"records": [{"dataset": "d"}]}, "give exactly one of"),
        ({"expected": []}, "'expected' must be a condition object"),
    ],
)
def test_bad_vectors_are_input_errors(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    doc = json.loads((VECTORS / "edge-n1.json").read_text(encoding="utf-8"))
    doc.update(change)
    path = _write_vector(tmp_path / "edge-n1.json", doc)
    with pytest.raises(InputError) as info:
        load_vector(path)
    assert message in str(info.value) and str(path) in str(info.value)


@pytest.mark.spec("CONF-VECTORS", "REC-ERRORS")
def test_bad_records_name_the_vector_and_record(tmp_path: Path) -> None:
    doc = json.loads((VECTORS / "edge-trials.json").read_text(encoding="utf-8"))
    doc["records"][2]["outcome"]["fed"] = 9
    path = _write_vector(tmp_path / "edge-trials.json", doc)
    with pytest.raises(InputError) as info:
        load_vector(path)
    assert info.value.where == f"{path}: records[2]" and "fed" in info.value.what
    doc["records"][2]["outcome"]["fed"] = 1
    doc["records"][2]["method"] = "another"
    _write_vector(path, doc)
    with pytest.raises(InputError, match="one condition"):
        load_vector(path)


# ---------------------------------------------------------------------------------------------
# Comparing condition objects


@pytest.mark.spec("CONF-COMPARE")
def test_compare_rules() -> None:
    expected = BY_ID["edge-trials"].expected
    same = json.loads(json.dumps(expected))
    assert compare_condition(expected, same, 1e-9) == []
    theirs = json.loads(json.dumps(expected))
    theirs["TER"] += 1e-10  # within the tolerance
    theirs["AUC_PEC"] += 1e-6  # beyond it
    theirs["N"] = 5.0  # a count written as a float is still equal
    theirs["RR_eligible"] = 4
    theirs["exact"]["TER"] = "4/10"  # equal as rationals
    theirs["exact"]["RR"] = "0.6667"  # not a rational string
    theirs["PEC"] = theirs["PEC"][:-1]
    theirs["decomposition"]["s"] = None
    theirs["ci"] = {"TER": [0, 1]}  # not a point estimate: ignored
    del theirs["labels"]["schema"]
    paths = {d.path: d for d in compare_condition(expected, theirs, 1e-9)}
    assert set(paths) == {
        "AUC_PEC",
        "RR_eligible",
        "exact.RR",
        "PEC length",
        "decomposition.s",
        "labels.schema",
    }
    assert "key missing" in paths["labels.schema"].describe()
    assert "undefined on one side only" in paths["decomposition.s"].describe()
    assert compare_condition(expected, theirs, 1e-5, skip=["exact", "PEC", "labels", "decomposition"]) == [
        d for d in compare_condition(expected, theirs, 1e-5) if d.path == "RR_eligible"
    ]


# ---------------------------------------------------------------------------------------------
# The command


@pytest.mark.spec("CONF-RUN")
def test_our_scorer_passes_its_own_vectors(capsys: pytest.CaptureFixture[str]) -> None:
    only = ["--only", "edge-label-ties", "--only", "edge-notool-refused", "--only", "random-0003"]
    code, out, err = run(["conformance", "--command", OURS, *only], capsys)
    assert (code, err) == (0, "")
    assert out == "3 of 3 vectors agree, 0 differ\n"


@pytest.mark.spec("CONF-RUN")
def test_the_issue_command_with_default_intervals_passes(capsys: pytest.CaptureFixture[str]) -> None:
    # `prefixexec score --json -` (10,000 resamples by default): intervals are not compared.
    command = f"{PY} -m prefixexec score --json -"
    code, out, _ = run(["conformance", "--command", command, "--only", "edge-trials", "--json"], capsys)
    assert code == 0
    assert json.loads(out) == {
        "vectors": 1,
        "differ": 0,
        "results": [{"id": "edge-trials", "ok": True, "error": None, "differences": []}],
    }


PERTURB = """
import contextlib, io, json, sys
from prefixexec.cli import main
buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    main(["score", "--json", "--bootstrap", "0", "-"])
doc = json.loads(buffer.getvalue())
c = doc["conditions"][0]
if "drop-exact" in sys.argv:
    del c["exact"]
else:
    c["TER"] += 0.01
    c["exact"]["AUC_PEC"] = "7/3"
    del c["labels"]
print(json.dumps(doc))
"""


@pytest.mark.spec("CONF-RUN", "CONF-COMPARE")
def test_a_wrong_implementation_is_reported_per_vector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "wrong impl.py"  # a space in the path: the command is split like a shell
    script.write_text(PERTURB, encoding="utf-8")
    command = f"{PY} {shlex.quote(str(script))}"
    only = ["--only", "edge-n1"]
    code, out, err = run(["conformance", "--command", command, *only], capsys)
    assert (code, err) == (1, "")
    assert out.count("FAIL ") == 1
    assert "FAIL edge-n1: 3 value(s) differ" in out
    assert "  TER: expected 0.0, got 0.01" in out
    assert '  exact.AUC_PEC: expected "1/3", got "7/3"' in out
    assert "  labels: expected" in out and "key missing" in out
    assert out.endswith("0 of 1 vectors agree, 1 differs\n")
    code, out, _ = run(["conformance", "--command", command + " drop-exact", *only], capsys)
    assert code == 1 and "exact: expected" in out
    code, out, _ = run(
        ["conformance", "--command", command + " drop-exact", "--skip", "exact", *only], capsys
    )
    assert code == 0


@pytest.mark.spec("CONF-RUN")
def test_failed_runs_fail_their_vector(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(30)\n", encoding="utf-8")
    chatty = tmp_path / "chatty.py"
    chatty.write_text("print('hello')\n", encoding="utf-8")
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nsys.exit('broken: no input')\n", encoding="utf-8")
    two = tmp_path / "two.py"
    two.write_text('print(\'{"signature": "x", "conditions": []}\')\n', encoding="utf-8")
    # Only the slow script gets the short timeout: an interpreter that prints one line can take
    # more than half a second to start on a loaded machine (seen under load 8).
    cases = [
        (slow, "0.5", "timed out after 0.5 s"),
        (chatty, "60", "output is not valid JSON"),
        (failing, "60", "exited with status 1: broken: no input"),
        (two, "60", "expected exactly one condition object, got 0"),
    ]
    for script, timeout, message in cases:
        args = ["conformance", "--command", f"{PY} {script}", "--only", "edge-n1", "--timeout", timeout]
        code, out, _ = run(args, capsys)
        assert code == 1 and f"FAIL edge-n1: {message}" in out, out


@pytest.mark.spec("CONF-RUN")
def test_the_command_never_goes_through_a_shell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "marker"
    command = f"{OURS} ; touch {marker}"  # with a shell this would create the marker
    code, out, _ = run(["conformance", "--command", command, "--only", "edge-n1"], capsys)
    assert code == 1 and "exited with status 2" in out  # score got ';', 'touch', ... as files
    assert not marker.exists()


@pytest.mark.spec("CONF-RUN", "REC-ERRORS")
def test_input_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["conformance", "--command", str(tmp_path / "no-such-program")], capsys)
    assert (code, out) == (2, "") and "no such program" in err
    code, out, err = run(["conformance", "--command", "python 'unbalanced"], capsys)
    assert (code, out) == (2, "") and "--command: cannot split into words" in err
    code, out, err = run(["conformance", "--command", OURS, "--only", "nothing-matches"], capsys)
    assert (code, out) == (2, "") and "no vectors found matching --only" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    code, out, err = run(["conformance", "--command", OURS, "--vectors", str(bad)], capsys)
    assert (code, out) == (2, "") and f"{bad}: not valid JSON" in err


@pytest.mark.spec("CONF-RUN", "CONF-VECTORS")
def test_vectors_are_shipped_as_package_data() -> None:
    # The default folder comes from the installed package (prefixexec.vectors), so a wheel install
    # finds the vectors without the source tree; in this checkout it is spec/vectors itself.
    from prefixexec.conformance import default_vectors_dir

    shipped = sorted(p.name for p in default_vectors_dir().glob("*.json"))
    in_spec = sorted(p.name for p in (REPO / "spec" / "vectors").glob("*.json"))
    assert shipped == in_spec and len(shipped) == 313


# ---------------------------------------------------------------------------------------------
# Speed: our own scorer in this process, other commands N at a time, progress on a terminal


@pytest.mark.spec("CONF-RUN")
def test_our_own_scorer_is_recognised_only_when_it_is_this_interpreter(tmp_path: Path) -> None:
    from prefixexec.conformance import own_scorer_arguments

    assert own_scorer_arguments([sys.executable, "-m", "prefixexec", "score", "-"]) == ["score", "-"]
    script = Path(sys.executable).parent / "prefixexec"
    assert own_scorer_arguments([str(script), "score", "--json", "-"]) == ["score", "--json", "-"]
    # Another interpreter (here a link to this one: another environment would differ), another
    # module, another program named prefixexec: run as subprocesses.
    other = tmp_path / "python"
    other.symlink_to(sys.executable)
    assert own_scorer_arguments([str(other), "-m", "prefixexec", "score", "-"]) is None
    assert own_scorer_arguments([sys.executable, "-m", "prefixexec_other", "score"]) is None
    fake = tmp_path / "prefixexec"
    fake.write_text("#!/bin/sh\n", encoding="utf-8")
    fake.chmod(0o755)
    assert own_scorer_arguments([str(fake), "score", "-"]) is None


@pytest.mark.spec("CONF-RUN")
def test_our_own_scorer_is_recognised_by_any_name_of_this_environments_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A virtual environment made by `python3 -m venv` has python, python3 and python3.X linking
    # to one binary; pip's prefixexec script starts with python3 while a user types python. Found
    # in a fresh environment: `prefixexec conformance --command ".venv/bin/python -m prefixexec
    # ..."` ran 313 subprocesses (35 s) instead of scoring in-process (about 1 s).
    from prefixexec.conformance import own_scorer_arguments

    env = tmp_path / "env" / "bin"
    env.mkdir(parents=True)
    for name in ("python", "python3"):
        (env / name).symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(env / "python3"))
    assert own_scorer_arguments([str(env / "python"), "-m", "prefixexec", "score", "-"]) == ["score", "-"]
    other = tmp_path / "other" / "bin"
    other.mkdir(parents=True)
    (other / "python").symlink_to(sys.executable)
    assert own_scorer_arguments([str(other / "python"), "-m", "prefixexec", "score", "-"]) is None
    not_python = env / "python-other"
    not_python.write_text("#!/bin/sh\n", encoding="utf-8")
    not_python.chmod(0o755)
    assert own_scorer_arguments([str(not_python), "-m", "prefixexec", "score", "-"]) is None


@pytest.mark.spec("CONF-RUN")
@pytest.mark.parametrize(
    "command",
    [
        OURS,
        f"{PY} -m prefixexec score --json --bootstrap 0 --adapter chat -",  # every vector fails
        f"{PY} -m prefixexec score --bootstrap 0 -",  # a table, not JSON
        f"{PY} -m prefixexec score --json --bootstrap -1 -",  # argparse refuses: status 2
    ],
)
def test_in_process_runs_report_what_subprocesses_report(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    only = ["--only", "edge-label-ties", "--only", "edge-n1", "--only", "random-0003", "--json"]
    fast = run(["conformance", "--command", command, *only], capsys)
    slow = run(["conformance", "--command", command, "--subprocess", *only], capsys)
    assert fast == slow
    assert json.loads(fast[1])["vectors"] == 3


@pytest.mark.spec("CONF-RUN")
def test_jobs_run_in_parallel_and_report_in_vector_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A command that is not ours (a script calling our scorer), so runs are subprocesses.
    script = tmp_path / "score.py"
    script.write_text("from prefixexec.cli import main\nraise SystemExit(main())\n", encoding="utf-8")
    command = f"{PY} {shlex.quote(str(script))} score --json --bootstrap 0 -"
    only = ["--only", "edge-*", "--json"]
    one = run(["conformance", "--command", command, "--jobs", "1", *only], capsys)
    three = run(["conformance", "--command", command, "--jobs", "3", *only], capsys)
    assert one == three and one[0] == 0
    ids = [r["id"] for r in json.loads(three[1])["results"]]
    assert ids == sorted(ids) and len(ids) == len([v for v in BY_ID if v.startswith("edge-")])
    with pytest.raises(SystemExit):
        main(["conformance", "--command", command, "--jobs", "0"])
    assert "--jobs: must be >= 1" in capsys.readouterr().err


class _Terminal:
    """A standard error that says it is a terminal, keeping what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.spec("CONF-RUN")
def test_progress_goes_to_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    only = ["--only", "edge-n1", "--only", "edge-label-ties"]
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["conformance", "--command", OURS, *only]) == 0
    # PROGRESS-COUNT: vectors done of all, the time left while some are left; the line is erased.
    lines = [t.rstrip() for t in terminal.text.split("\r") if t.strip()]
    assert [ln.split("  ")[:2] for ln in lines] == [
        ["prefixexec conformance: checking", f"{k}/2 vectors"] for k in (0, 1, 2)
    ]
    assert "left" in lines[1] and terminal.text.endswith("\r")
    monkeypatch.undo()
    code, _, err = run(["conformance", "--command", OURS, *only], capsys)  # not a terminal
    assert (code, err) == (0, "")
