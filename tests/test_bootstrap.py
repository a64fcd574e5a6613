"""Bootstrap, Wilson intervals, pairing and comparisons, against reference libraries."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from prefixexec.cli import main
from prefixexec.kernel import Cohort, Outcome
from prefixexec.kernel.bootstrap import (
    BootstrapSettings,
    bootstrap_dataset,
    intervals,
    percentile_interval,
    resample_counts,
    wilson_interval,
)

from strategies import cohort_of, triples


def one_per_task(seed: int, n: int = 120, max_t: int = 20) -> Cohort:
    rng = np.random.default_rng(seed)
    T = rng.integers(1, max_t + 1, n)
    fed = np.array([rng.integers(1, t + 2) for t in T])
    Y = rng.random(n) < 0.5
    return Cohort(
        T=T, fed=fed, Y=Y, label_code=np.where(fed == T + 1, -1, 5), task=[f"t{i:04d}" for i in range(n)]
    )


def scipy_ci(
    data: np.ndarray[Any, Any], statistic: Any, B: int, seed: int, level: float
) -> tuple[float, float]:
    res = stats.bootstrap(
        (data,),
        statistic,
        n_resamples=B,
        method="percentile",
        rng=seed,
        vectorized=True,
        confidence_level=level,
    )
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


@pytest.mark.spec("BOOT-PERCENTILE", "BOOT-DRAW", "BOOT-REPLICATE")
@pytest.mark.parametrize(("seed", "level"), [(0, 0.95), (7, 0.9), (123, 0.99)])
def test_intervals_equal_scipy_bootstrap_exactly(seed: int, level: float) -> None:
    c = one_per_task(seed)
    B = 2000
    reps = bootstrap_dataset({"c": c}, BootstrapSettings(B=B, seed=seed, level=level))["c"]
    ours = intervals(reps, 0, 0, level).scalars
    T, fed, Y = c.T, c.fed, c.Y
    # Reference: scipy.stats.bootstrap (percentile) with the statistic computed the way the
    # spec defines the replicate (exact integer sums, one rounding). TER, success, mean FED are
    # means of integers; AUC-PEC's integer numerators use L = lcm of the horizons.
    L = math.lcm(*np.unique(T).tolist())
    auc_num = ((fed - 1) * (L // T)).astype(np.float64)

    def auc_stat(x: np.ndarray[Any, Any], axis: int) -> np.ndarray[Any, Any]:
        return np.sum(x, axis=axis) / (L * x.shape[axis])

    assert ours["TER"] == scipy_ci((fed == T + 1).astype(np.float64), np.mean, B, seed, level)
    assert ours["success"] == scipy_ci(Y.astype(np.float64), np.mean, B, seed, level)
    assert ours["mean_FED"] == scipy_ci(fed.astype(np.float64), np.mean, B, seed, level)
    assert ours["AUC_PEC"] == scipy_ci(auc_num, auc_stat, B, seed, level)
    # With scipy's plain float mean of (FED-1)/T the endpoints agree to rounding error.
    plain = scipy_ci((fed - 1) / T, np.mean, B, seed, level)
    assert ours["AUC_PEC"] is not None
    assert np.allclose(ours["AUC_PEC"], plain, rtol=0, atol=1e-12)


@pytest.mark.spec("BOOT-DRAW")
def test_resample_counts_match_index_matrix() -> None:
    W = resample_counts(7, 50, 3)
    idx = np.random.default_rng(3).integers(0, 7, size=(50, 7))
    for b in range(50):
        assert [int(x) for x in W[b]] == [int(np.count_nonzero(idx[b] == j)) for j in range(7)]


@pytest.mark.spec("BOOT-WILSON")
def test_wilson_against_statsmodels() -> None:
    # Reference values from the benchmarks note: proportion_confint(12, 20, method='wilson').
    interval = wilson_interval(12, 20, 0.95)
    assert interval is not None
    assert (round(interval[0], 6), round(interval[1], 6)) == (0.386582, 0.781193)
    for count, nobs, level in [(0, 5, 0.95), (5, 5, 0.95), (138, 190, 0.95), (3, 7, 0.9), (1, 1, 0.99)]:
        ours = wilson_interval(count, nobs, level)
        ref = proportion_confint(count, nobs, alpha=1 - level, method="wilson")
        assert ours is not None and np.allclose(ours, ref, rtol=0, atol=1e-12)
    assert wilson_interval(0, 0, 0.95) is None
    # Clamped to [0, 1]: with no recovery the lower end is 0, never a rounding residue below it.
    for nobs in range(1, 300):
        low = wilson_interval(0, nobs, 0.95)
        high = wilson_interval(nobs, nobs, 0.95)
        assert low is not None and low[0] == 0.0 and high is not None and high[1] == 1.0


def naive_replicate(c: Cohort, tasks: list[str], row: np.ndarray[Any, Any], metric: str) -> float | None:
    """Replicate b by brute force: gather the rollouts of every drawn task, compute with Fractions."""
    chosen = [i for j in row for i in range(c.N) if c.task[i] == tasks[int(j)]]
    T = [int(c.T[i]) for i in chosen]
    fed = [int(c.fed[i]) for i in chosen]
    Y = [bool(c.Y[i]) for i in chosen]
    if metric == "RR":
        den = sum(1 for t, f in zip(T, fed, strict=True) if f <= t)
        num = sum(1 for t, f, y in zip(T, fed, Y, strict=True) if f <= t and y)
        return None if den == 0 else float(Fraction(num, den))
    if not chosen:
        return None
    values = {
        "TER": sum(Fraction(int(f == t + 1)) for t, f in zip(T, fed, strict=True)),
        "AUC_PEC": sum(Fraction(f - 1, t) for t, f in zip(T, fed, strict=True)),
        "mean_FED": Fraction(sum(fed)),
        "success": Fraction(sum(Y)),
    }
    return float(values[metric] / len(chosen))


@pytest.mark.spec("BOOT-CLUSTER", "BOOT-REPLICATE", "BOOT-DROP")
@settings(max_examples=30)
@given(st.lists(triples(max_t=6), min_size=2, max_size=18), st.integers(0, 2**16))
def test_replicates_agree_with_brute_force_clusters(items: list[Any], seed: int) -> None:
    # Several trials per task: rollouts are assigned to 4 tasks round-robin.
    tasks = [f"task{i % 4}" for i in range(len(items))]
    c = cohort_of(items, tasks)
    task_list = sorted(set(tasks))
    B = 40
    reps = bootstrap_dataset({"c": c}, BootstrapSettings(B=B, seed=seed))["c"]
    idx = np.random.default_rng(seed).integers(0, len(task_list), size=(B, len(task_list)))
    for metric in ("TER", "AUC_PEC", "mean_FED", "success", "RR"):
        expected = [naive_replicate(c, task_list, idx[b], metric) for b in range(B)]
        got = [None if math.isnan(v) else float(v) for v in reps.scalars[metric]]
        assert got == expected, metric
    dropped = intervals(reps, 0, 0, 0.95).dropped["RR"]
    assert dropped == sum(1 for b in range(B) if naive_replicate(c, task_list, idx[b], "RR") is None)


@pytest.mark.spec("BOOT-DROP", "CONV-UNDEFINED")
def test_metric_without_defined_replicates_has_null_interval() -> None:
    c = cohort_of([(Outcome(2, 3), True), (Outcome(1, 2), False)])  # nothing RR-eligible
    reps = bootstrap_dataset({"c": c}, BootstrapSettings(B=100, seed=1))["c"]
    iv = intervals(reps, 0, 0, 0.95)
    assert iv.scalars["RR"] is None and iv.dropped["RR"] == 100 and iv.RR_wilson is None
    assert percentile_interval(np.array([np.nan, 0.5]), 0.95) == (0.5, 0.5)


def write(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def rec(task: str, method: str, T: int, fed: int, y: bool, dataset: str = "d") -> dict[str, Any]:
    return {
        "dataset": dataset,
        "model": "m",
        "method": method,
        "task_id": task,
        "success": y,
        "outcome": {"T": T, "fed": fed},
    }


GRID = [
    rec(f"t{i}", method, 3, (i * (2 + j)) % 4 + 1, (i + j) % 3 != 0)
    for j, method in enumerate(["a", "b", "c"])
    for i in range(12)
]


@pytest.mark.spec("BOOT-PAIRED", "REC-ERRORS")
def test_unpaired_task_sets_are_an_error_unless_opted_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [r for r in GRID if not (r["method"] == "b" and r["task_id"] in ("t3", "t7"))]
    path = write(tmp_path / "g.jsonl", records)
    assert main(["score", "--json", path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "d / m / b lacks task(s) t3, t7" in err and "--unpaired" in err
    assert main(["score", "--json", "--unpaired", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["signature"].endswith("paired:no")


@pytest.mark.spec("BOOT-PAIRED", "CMP-PAIRED")
def test_conditions_share_resamples_and_compare_uses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "g.jsonl", GRID)
    assert main(["compare", "--json", "--baseline", "a", "--bootstrap", "500", "--seed", "4", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    # Reference: the same replicates recomputed from one shared index matrix by hand.
    from prefixexec.adapters.records import read_records
    from prefixexec.kernel import group_by_condition

    cohorts = group_by_condition(read_records([path]))
    reps = bootstrap_dataset(cohorts, BootstrapSettings(B=500, seed=4))
    by_method = {k.method: v for k, v in reps.items()}
    for comp in doc["comparisons"]:
        diff = by_method[comp["method"]].scalars["TER"] - by_method["a"].scalars["TER"]
        expected = percentile_interval(diff, 0.95)
        assert expected is not None and comp["ci"]["TER"] == list(expected)
    assert [c["method"] for c in doc["comparisons"]] == ["b", "c"]
    b = next(c for c in doc["comparisons"] if c["method"] == "b")
    ter = {m: sum(1 for r in GRID if r["method"] == m and r["outcome"]["fed"] == 4) for m in "ab"}
    assert b["exact"]["TER"] == str(Fraction(ter["b"] - ter["a"], 12))


@pytest.mark.spec("CMP-PAIRED")
def test_compare_unknown_baseline_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "g.jsonl", GRID)
    assert main(["compare", "--baseline", "zzz", path]) == 2
    assert "no condition has method 'zzz'" in capsys.readouterr().err


@pytest.mark.spec("OUT-CI", "OUT-SIGNATURE", "BOOT-WILSON")
def test_score_json_intervals_and_signature(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "g.jsonl", GRID)
    assert main(["score", "--json", "--bootstrap", "300", "--seed", "2", "--level", "0.9", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["signature"] == (
        "prefixexec:0.1.0|spec:1|adapter:records|boot:300|seed:2|level:0.9|ci:percentile|rr:wilson|paired:yes"
    )
    for cond in doc["conditions"]:
        ci = cond["ci"]
        assert set(ci) == {
            "TER",
            "AUC_PEC",
            "mean_FED",
            "success",
            "RR_wilson",
            "RR_bootstrap",
            "PEC",
            "PEC_elig",
        }
        assert len(ci["PEC"]) == len(cond["PEC"]) and len(ci["PEC_elig"]) == len(cond["PEC_elig"])
        for name in ("TER", "AUC_PEC", "success"):
            lo, hi = ci[name]
            assert 0 <= lo <= hi <= 1
        assert set(cond["ci_dropped"]) >= {"RR", "PEC_elig"}
        wilson = wilson_interval(cond["recovered"], cond["RR_eligible"], 0.9)
        assert ci["RR_wilson"] == (None if wilson is None else list(wilson))


@pytest.mark.spec("OUT-CI", "OUT-TABLE")
def test_table_prints_value_and_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "g.jsonl", GRID)
    assert main(["score", "--bootstrap", "200", path]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("a "))
    # "a  12  0.25 [0.00, 0.50]  ..." -- value then a bracketed interval, two decimals.
    assert re.match(r"a\s+12\s+\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", line)


@pytest.mark.spec("BOOT-DRAW", "OUT-SIGNATURE")
def test_bootstrap_off_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "g.jsonl", GRID)
    assert main(["score", "--json", "--bootstrap", "0", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "ci" not in doc["conditions"][0] and doc["signature"].endswith("|boot:0")
    for bad in (["--level", "1.5"], ["--bootstrap", "-3"], ["--seed", "x"]):
        with pytest.raises(SystemExit) as exc:
            main(["score", *bad, path])
        assert exc.value.code == 2
    capsys.readouterr()


@pytest.mark.spec("BOOT-REPLICATE")
def test_long_horizons_use_exact_integers() -> None:
    # Horizons 1..49: their lcm (about 3e21) exceeds int64, so the sums switch to Python integers;
    # the replicates must still equal the brute-force Fractions rounded once.
    items = [(Outcome(t, 1 + (t * 7) % (t + 1)), t % 2 == 0) for t in range(1, 50)]
    c = cohort_of(items, [f"task{i % 7}" for i in range(len(items))])
    tasks = sorted(set(c.task))
    B = 30
    reps = bootstrap_dataset({"c": c}, BootstrapSettings(B=B, seed=9))["c"]
    idx = np.random.default_rng(9).integers(0, len(tasks), size=(B, len(tasks)))
    expected = [naive_replicate(c, tasks, idx[b], "AUC_PEC") for b in range(B)]
    assert [float(v) for v in reps.scalars["AUC_PEC"]] == expected


@pytest.mark.spec("REC-ERRORS")
def test_input_error_survives_pickling() -> None:
    # Dask workers send errors back pickled: the place and the fault must survive.
    import pickle

    from prefixexec.adapters import InputError

    error = pickle.loads(pickle.dumps(InputError("runs.jsonl:3", "not valid JSON")))
    assert (str(error), error.where, error.what) == (
        "runs.jsonl:3: not valid JSON",
        "runs.jsonl:3",
        "not valid JSON",
    )


@pytest.mark.spec("BOOT-REPLICATE")
@pytest.mark.parametrize("top", [2**24 // 200 - 1, 2**24 // 200 + 1, 2**53 // 200 - 1, 2**53 // 200 + 1])
def test_weighted_sums_are_exact_on_both_sides_of_the_float32_and_float64_limits(top: int) -> None:
    # 200 tasks: 200 x top is just below or above 2^24 (float32 products) and 2^53 (float64),
    # so each side of each limit takes its own path; the exact product is taken in Python integers.
    from prefixexec.kernel.bootstrap import weighted_sums

    rng = np.random.default_rng(top % 1000)
    X = rng.integers(top - 1000, top, size=(200, 5)).astype(np.int64)
    X[0, 0] = top  # the largest entry sets the bound
    W = resample_counts(200, 300, 1)
    exact = X.T.astype(object) @ W.T.astype(object)
    got = weighted_sums(W, X)
    assert got.shape == (5, 300)
    # Every sum rounds once to the nearest double (exact below 2^53, Python's int -> float above).
    assert [float(v) for v in got.reshape(-1)] == [float(int(v)) for v in exact.reshape(-1)]


@pytest.mark.spec("BOOT-PERCENTILE")
@settings(max_examples=50)
@given(
    st.lists(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3, math.nan]), min_size=7, max_size=7),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([0.5, 0.9, 0.95]),
)
def test_selected_order_statistics_equal_the_sorted_ones(rows: list[list[float]], level: float) -> None:
    # numpy.partition selects the order statistics; the reference sorts each row (ties and NaN
    # included), then interpolates as scipy does; overwrite=False leaves the input alone.
    from prefixexec.kernel.bootstrap import _levels, _linear_positions, percentile_intervals_rows

    block = np.array(rows, dtype=np.float64)
    before = block.copy()
    got = percentile_intervals_rows(block, level)
    np.testing.assert_array_equal(block, before)
    want: list[tuple[float, float] | None] = []
    for row in before:
        y = np.sort(row[~np.isnan(row)])
        if y.shape[0] == 0:
            want.append(None)
            continue
        ends = []
        for p in _levels(level):
            j, jp1, g = _linear_positions(y.shape[0], p)
            ends.append(float((1 - g) * y[j] + g * y[jp1]))
        want.append((ends[0], ends[1]))
    assert got == want
    assert percentile_intervals_rows(block.copy(), level, overwrite=True) == got
