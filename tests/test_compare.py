"""compare --baseline KEY=VALUE on shared tasks, with paired p-values (CMP-BASELINE, CMP-PVALUE).

Independent checks: the method comparison equals the earlier per-dataset comparison
(prefixexec.inference.compare on evaluate_accumulators) on the golden input; on shared tasks the
replicates are recomputed here from the resample counts with plain numpy sums (no kernel code
but the seeded draw of BOOT-DRAW), and the point estimates by literal counting.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prefixexec.adapters import AdapterOptions
from prefixexec.cli import main
from prefixexec.engine import accumulate_input
from prefixexec.inference import (
    compare,
    compare_conditions,
    evaluate_accumulators,
    paired_p_value,
    restrict,
)
from prefixexec.kernel.accumulator import AccumulatorSet
from prefixexec.kernel.bootstrap import BootstrapSettings, resample_counts

from conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "report_input.jsonl"


def record(model: str, task: str, T: int, fed: int, success: bool, method: str = "react") -> dict[str, Any]:
    return {"dataset": "d", "task_id": task, "model": model, "method": method, "success": success,
            "outcome": {"T": T, "fed": fed}}  # fmt: skip


#: m1 on t1..t5 and m2 on t2..t6: they share t2..t5. (T, FED, Y) chosen by hand.
ROWS = {
    "m1": {"t1": (2, 3, 1), "t2": (3, 1, 0), "t3": (2, 3, 1), "t4": (4, 2, 1), "t5": (1, 2, 0)},
    "m2": {"t2": (3, 4, 1), "t3": (2, 1, 0), "t4": (4, 5, 1), "t5": (1, 2, 1), "t6": (5, 1, 0)},
}


@pytest.fixture
def shared_input(tmp_path: Path) -> Path:
    path = tmp_path / "shared.jsonl"
    lines = [
        json.dumps(record(model, task, T, fed, bool(y)))
        for model, rows in ROWS.items()
        for task, (T, fed, y) in rows.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def accumulators(path: Path) -> AccumulatorSet:
    return accumulate_input("records", [str(path)], AdapterOptions())


@pytest.mark.spec("CMP-BASELINE", "CMP-PAIRED")
def test_a_method_baseline_is_the_earlier_paired_comparison() -> None:
    accs = accumulators(GOLDEN)
    settings = BootstrapSettings(B=400, seed=3)
    old, old_skipped = compare(evaluate_accumulators(accs, settings, paired=True), "a", 0.95)
    new, skipped = compare_conditions(accs, settings, "method=a", 0.95)
    assert compare_conditions(accs, settings, "a", 0.95)[0] == new  # a bare METHOD is method=METHOD
    assert old_skipped == [] and skipped == []
    assert len(old) == len(new) == 4  # alpha/m1: b, c; alpha/m2: b; beta/m1: b
    by_key = {(c["dataset"], c["model"], c["method"]): c for c in new}
    for c in old:
        n = by_key[(c["dataset"], c["model"], c["method"])]
        for field in ("diff", "exact", "ci", "ci_dropped", "p_value"):
            assert n[field] == c[field], field
        assert n["shared_tasks"] == n["tasks"] == n["baseline_tasks"]


@pytest.mark.spec("CMP-BASELINE")
def test_models_are_compared_on_their_shared_tasks(shared_input: Path) -> None:
    accs = accumulators(shared_input)
    (c,), skipped = compare_conditions(accs, None, "model=m1", 0.95)
    assert skipped == []
    assert (c["model"], c["baseline"], c["shared_tasks"], c["tasks"], c["baseline_tasks"]) == (
        "m2",
        "m1",
        4,
        5,
        5,
    )
    # Literal counts on t2..t5. m2: FED > T for t2, t4, t5 -> TER 3/4; Y = 1, 0, 1, 1 -> 3/4.
    # m1: FED > T for t3, t5 -> TER 2/4; Y = 0, 1, 1, 0 -> 2/4. Differences: 1/4 and 1/4.
    assert c["exact"]["TER"] == str(Fraction(1, 4)) and c["exact"]["success"] == str(Fraction(1, 4))
    # AUC-PEC: m2 (1 + 0 + 1 + 1)/4 = 3/4; m1 (0 + 1 + 1/4 + 1)/4 = 9/16; difference 3/16.
    assert c["exact"]["AUC_PEC"] == "3/16"


@pytest.mark.spec("CMP-BASELINE", "CMP-PVALUE")
def test_shared_task_replicates_are_paired(shared_input: Path) -> None:
    B, seed = 300, 11
    (c,), _ = compare_conditions(
        accumulators(shared_input), BootstrapSettings(B=B, seed=seed), "model=m1", 0.95
    )
    shared = ["t2", "t3", "t4", "t5"]
    W = resample_counts(len(shared), B, seed).astype(float)  # one draw over the shared tasks
    executable = {m: np.array([float(ROWS[m][t][1] > ROWS[m][t][0]) for t in shared]) for m in ROWS}
    ter = {m: W @ executable[m] / W.sum(axis=1) for m in ROWS}
    d = ter["m2"] - ter["m1"]
    lo, hi = np.percentile(d, [2.5, 97.5])
    assert c["ci"]["TER"] == pytest.approx([lo, hi], abs=1e-12)
    tail = min(np.count_nonzero(d <= 0), np.count_nonzero(d >= 0))
    assert c["p_value"]["TER"] == min(1.0, 2 * tail / B) and c["p_value_resamples"]["TER"] == B


@pytest.mark.spec("CMP-PVALUE")
def test_p_value_by_hand() -> None:
    # d* = 1, 2, -1, 0, 3: #{<= 0} = 2, #{>= 0} = 4 -> p = 2 * 2 / 5.
    assert paired_p_value(np.array([1.0, 2, -1, 0, 3]), np.zeros(5)) == pytest.approx(0.8)
    # All above 0: p = 0 (printed p < 2/B'); NaN replicates are left out of B'.
    assert paired_p_value(np.array([1.0, 2, np.nan]), np.zeros(3)) == 0.0
    assert paired_p_value(np.array([np.nan]), np.zeros(1)) is None
    # Never above 1: all replicates exactly 0.
    assert paired_p_value(np.zeros(4), np.zeros(4)) == 1.0


@pytest.mark.spec("CMP-BASELINE")
def test_restrict_equals_reading_only_the_shared_tasks(shared_input: Path, tmp_path: Path) -> None:
    subset = tmp_path / "subset.jsonl"
    lines = [line for line in shared_input.read_text(encoding="utf-8").splitlines()
             if json.loads(line)["task_id"] in ("t3", "t4")]  # fmt: skip
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    full, part = accumulators(shared_input).as_dict(), accumulators(subset).as_dict()
    for key, acc in full.items():
        assert restrict(acc, ["t3", "t4"]) == part[key]


@pytest.mark.spec("CMP-BASELINE")
def test_conditions_without_a_baseline_or_shared_tasks_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        record("m1", "t1", 1, 2, True),
        record("m2", "t2", 1, 2, True),
        record("m3", "t1", 1, 1, False, "other"),
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    comparisons, skipped = compare_conditions(accumulators(path), None, "model=m1", 0.95)
    assert comparisons == []
    assert skipped == [
        "d / m2 / react (no task shared with its baseline)",
        "d / m3 / other (no condition with model 'm1' and the same other keys)",
    ]


@pytest.mark.spec("CMP-BASELINE", "CMP-PVALUE")
def test_compare_command_prints_shared_tasks_and_p_values(
    shared_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "--baseline", "model=m1", "--bootstrap", "200", str(shared_input)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("baseline d / m1 / react: difference = model - baseline model (model m1)")
    row = out.splitlines()[3]
    assert (row.split()[:2] == ["m2", "4"] and " p=" in row) or " p<" in row
    for bad, message in (
        ("colour=red", "expected METHOD or KEY=VALUE"),
        ("model=zz", "no condition has model 'zz'"),
    ):
        assert main(["compare", "--baseline", bad, str(shared_input)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("prefixexec: error: --baseline: ") and message in err


@pytest.mark.spec("CLI-NO-EFFECT")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--model", "x"],
            "--model: has no effect with --adapter records: records input carries its own model",
        ),
        (["--method", "x"], "--method: has no effect with --adapter records"),
        (
            ["--category", "base"],
            "--category: has no effect with --adapter records: it only applies with --adapter bfcl",
        ),
        (["--threshold", "0.5"], "only applies with --adapter inspect or toolsandbox"),
        (["--scorer", "s"], "--scorer: has no effect"),
        (["--error-pattern", "x"], "--error-pattern: has no effect"),
        (["--inference-errors", "exclude"], "--inference-errors: only applies with --adapter bfcl"),
        (["--select", "task_id=t1", "--engine", "dask"], "--engine dask: cannot be combined with --select"),
    ],
)
def test_options_without_effect_are_errors(
    argv: list[str], message: str, shared_input: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "--bootstrap", "0", *argv, str(shared_input)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("prefixexec: error: ")
    assert message in captured.err and captured.err.count("\n") == 1


@pytest.mark.spec("OUT-SELECT", "OUT-ROLLOUTS-FILE")
def test_score_selects_and_writes_rows(
    shared_input: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.jsonl"
    argv = ["score", "--json", "--bootstrap", "0", "--select", "model=m2", "--rollouts", str(rows)]
    assert main([*argv, str(shared_input)]) == 0
    (condition,) = json.loads(capsys.readouterr().out)["conditions"]
    assert condition["model"] == "m2" and condition["N"] == 5
    written = [json.loads(line) for line in rows.read_text(encoding="utf-8").splitlines()]
    assert [r["task_id"] for r in written] == ["t2", "t3", "t4", "t5", "t6"]
    assert all(r["source"] is None or r["source"].startswith(str(shared_input)) for r in written)
