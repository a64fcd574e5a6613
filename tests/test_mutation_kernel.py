"""Tests written for mutants of kernel/ that survived the kernel's suite (issue 19).

Each test here kills a group of surviving mutmut mutants listed in tests/mutation.md; it states
a behaviour the spec or the docstring promises that no earlier test pinned: the error
messages that name what is wrong (REC-ERRORS asks for clear messages), the bounds of
``prefix_executable`` (EQ-2), the replayed actions kept as evidence, the integer dtype of the
counts (CONV-EXACT), the copies of INV-IMMUTABLE, the type-7 percentile of BOOT-PERCENTILE
against numpy's own implementation, and the ratio of BOOT-REPLICATE / BOOT-DROP.
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.kernel import (
    LABEL_ORDER,
    Accepted,
    Cohort,
    ConditionKey,
    Label,
    Outcome,
    Rejected,
    parse_label,
    primary_label,
    replay,
)
from prefixexec.kernel import bootstrap as boot
from prefixexec.kernel import estimators as est
from prefixexec.kernel.accumulator import Accumulator, AccumulatorSet, RolloutArrays, accumulate
from prefixexec.kernel.actions import Action, ToolCall
from prefixexec.kernel.replay import first_error_depth

# ---------------------------------------------------------------------------------------------
# Messages and bounds


def make_cohort(**fields: Any) -> Cohort:
    return Cohort(**fields)


@pytest.mark.spec("EQ-2")
def test_prefix_executable_at_every_depth_and_its_bounds() -> None:
    o = Outcome(T=4, fed=3)
    # EQ-2: prefix k executable iff FED > k, for k = 1..T (here FED = 3).
    assert [o.prefix_executable(k) for k in range(1, 5)] == [True, True, False, False]
    assert Outcome(T=1, fed=2).prefix_executable(1) is True
    assert Outcome(T=1, fed=1).prefix_executable(1) is False
    for k in (0, 5, -1):
        with pytest.raises(ValueError, match=re.escape(f"'k' must be in [1, T] = [1, 4]: {k}")):
            o.prefix_executable(k)


@pytest.mark.spec("EQ-1")
def test_first_error_depth_of_no_verdict_names_the_fault() -> None:
    with pytest.raises(ValueError, match=r"^'verdicts' must hold at least one action \(T >= 1\)$"):
        first_error_depth([])


@pytest.mark.spec("CONV-REPLAY")
def test_replay_keeps_the_actions_as_evidence() -> None:
    class Recorded:
        def initial_state(self, task: tuple[bool, ...]) -> tuple[tuple[bool, ...], int]:
            return (task, 0)

        def step(
            self, state: tuple[tuple[bool, ...], int], action: Action
        ) -> Accepted[tuple[tuple[bool, ...], int]] | Rejected:
            task, i = state
            return Accepted((task, i + 1)) if task[i] else Rejected((Label.SCHEMA,), "no")

    calls = [ToolCall("a", {}, None), ToolCall("b", {}, None), ToolCall("c", {}, None)]
    failing = replay(Recorded(), (True, False, True), calls)
    assert (failing.T, failing.fed, failing.label) == (3, 2, Label.SCHEMA)
    assert tuple(failing.actions) == tuple(calls)
    passing = replay(Recorded(), (True, True, True), calls)
    assert (passing.T, passing.fed) == (3, 4)
    assert tuple(passing.actions) == tuple(calls)


@pytest.mark.spec("CONV-LABEL-ORDER")
def test_parse_label_accepts_every_name_and_lists_them_when_it_cannot() -> None:
    for label in LABEL_ORDER:
        assert parse_label(label.value) is label
    accepted = "schema, dependency, precondition, state_consistency, information"
    with pytest.raises(ValueError, match=re.escape(f"unknown label 'syntax' (expected one of: {accepted})")):
        parse_label("syntax")
    assert primary_label([Label.INFORMATION, Label.DEPENDENCY, Label.DEPENDENCY]) is Label.DEPENDENCY


@pytest.mark.spec("CONV-FIXED-COHORT")
def test_cohort_shape_faults_name_the_field_and_the_sizes() -> None:
    good = {"T": [2, 3], "fed": [3, 1], "Y": [True, False], "label_code": [-1, 5], "task": ["a", "b"]}
    assert make_cohort(**good).N == 2
    for name, short in (("fed", [3]), ("Y", [True]), ("label_code", [-1])):
        with pytest.raises(ValueError, match=re.escape(f"'{name}' has 1 entries, 'T' has 2")):
            make_cohort(**{**good, name: short})
    with pytest.raises(ValueError, match=re.escape("'task' has 3 entries, 'T' has 2")):
        make_cohort(**{**good, "task": ["a", "b", "c"]})
    empty: dict[str, list[int]] = {"T": [], "fed": [], "Y": [], "label_code": [], "task": []}
    with pytest.raises(ValueError, match=r"^a cohort needs at least one rollout \(N >= 1\)$"):
        make_cohort(**empty)


@pytest.mark.spec("INV-IMMUTABLE")
def test_cohort_copies_the_callers_arrays() -> None:
    T = np.array([2, 3], dtype=np.int64)
    fed = np.array([3, 1], dtype=np.int64)
    Y = np.array([True, False])
    code = np.array([-1, 5], dtype=np.int64)
    cohort = Cohort(T=T, fed=fed, Y=Y, label_code=code, task=["a", "b"])
    for mine, theirs in ((cohort.T, T), (cohort.fed, fed), (cohort.Y, Y), (cohort.label_code, code)):
        assert not mine.flags.writeable
        assert theirs.flags.writeable, "the caller's array must stay writable"
        assert not np.shares_memory(mine, theirs)
    Y[0] = False
    assert bool(cohort.Y[0]) is True


@pytest.mark.spec("CONV-EXACT")
def test_count_arrays_are_integers() -> None:
    T = np.array([1, 3, 3, 2], dtype=np.int64)
    fed = np.array([2, 1, 4, 2], dtype=np.int64)
    # By hand: FED > k for k = 1, 2, 3 -> [3, 1, 1]; T >= k -> [4, 3, 2].
    survival, eligible = est.survival_counts(T, fed), est.eligible_counts(T)
    assert survival.dtype == np.int64 and survival.tolist() == [3, 1, 1]
    assert eligible.dtype == np.int64 and eligible.tolist() == [4, 3, 2]


# ---------------------------------------------------------------------------------------------
# BOOT-PERCENTILE against numpy's linear (type 7) quantile, BOOT-REPLICATE's ratio

finite = st.floats(-1e6, 1e6, allow_nan=False)


@pytest.mark.spec("BOOT-PERCENTILE")
@given(
    values=st.lists(finite, min_size=1, max_size=40),
    level=st.floats(0.01, 0.99),
    holes=st.lists(st.booleans(), max_size=40),
)
def test_percentile_interval_is_numpys_linear_quantile(
    values: list[float], level: float, holes: list[bool]
) -> None:
    y = np.array(values, dtype=np.float64)
    alpha = (1 - level) / 2
    want = np.quantile(y, [alpha, 1 - alpha], method="linear")
    got = boot.percentile_interval(y, level)
    assert got is not None
    scale = max(1.0, float(np.abs(y).max()))
    assert math.isclose(got[0], want[0], rel_tol=1e-12, abs_tol=1e-12 * scale)
    assert math.isclose(got[1], want[1], rel_tol=1e-12, abs_tol=1e-12 * scale)
    # The same values as rows of a block, some rows with NaN holes (left out).
    rows = np.stack([y, y[::-1].copy()])
    mask = np.array((holes + [False] * len(values))[: len(values)])
    rows[1][mask] = np.nan
    both = boot.percentile_intervals_rows(rows.copy(), level)
    assert both[0] is not None and math.isclose(both[0][0], got[0], rel_tol=1e-12, abs_tol=1e-12 * scale)
    kept = rows[1][~np.isnan(rows[1])]
    if kept.shape[0] == 0:
        assert both[1] is None
    else:
        want1 = np.quantile(kept, [alpha, 1 - alpha], method="linear")
        assert both[1] is not None
        assert math.isclose(both[1][0], want1[0], rel_tol=1e-12, abs_tol=1e-12 * scale)
        assert math.isclose(both[1][1], want1[1], rel_tol=1e-12, abs_tol=1e-12 * scale)


@pytest.mark.spec("BOOT-PERCENTILE")
def test_percentile_positions_by_hand() -> None:
    # n = 5 sorted values 10..50; level 0.5 -> p = 0.25 and 0.75: jg = p n + 1 - p = 2.0, 4.0
    # -> y[1] = 20 and y[3] = 40; level 0.8 -> p = 0.1, 0.9: jg = 1.4, 4.6 -> 10 + 0.4 * 10 = 14
    # and 40 + 0.6 * 10 = 46.
    y = np.array([50.0, 10.0, 40.0, 20.0, 30.0])
    assert boot.percentile_interval(y, 0.5) == (20.0, 40.0)
    wide = boot.percentile_interval(y, 0.8)
    assert wide is not None and math.isclose(wide[0], 14.0) and math.isclose(wide[1], 46.0)
    assert boot.percentile_interval(np.array([7.0]), 0.95) == (7.0, 7.0)
    assert boot.percentile_interval(np.array([np.nan, np.nan]), 0.95) is None


@pytest.mark.spec("BOOT-REPLICATE", "BOOT-DROP")
def test_ratio_rounds_once_and_leaves_out_zero_denominators() -> None:
    num = np.array([[1.0, 2.0], [0.0, 3.0]])
    den = np.array([[3.0, 0.0], [0.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero warning may escape
        out = boot._ratio(num, den)
    assert out.dtype == np.float64
    assert out[0, 0] == 1 / 3 and out[1, 1] == 0.75
    assert np.isnan(out[0, 1]) and np.isnan(out[1, 0])
    # Exact integers beyond 2^53 (object arrays): int / int is correctly rounded.
    big = 2**60 + 1
    num_o = np.array([[big, 1], [5, 0]], dtype=object)
    den_o = np.array([[3, 0], [2, 7]], dtype=object)
    out_o = boot._ratio(num_o, den_o)
    assert out_o.dtype == np.float64 and out_o.shape == (2, 2)
    assert out_o[0, 0] == big / 3 and out_o[1, 0] == 2.5 and out_o[1, 1] == 0.0
    assert np.isnan(out_o[0, 1])
    # Mixed: float numerators with object denominators take the exact path too.
    mixed = boot._ratio(np.array([1.0, 2.0]), np.array([4, 0], dtype=object))
    assert mixed.dtype == np.float64 and mixed[0] == 0.25 and np.isnan(mixed[1])


# ---------------------------------------------------------------------------------------------
# ACC-BATCH: which (task, trial) keys an accumulator has seen


@pytest.mark.spec("ACC-BATCH", "REC-UNIQUE")
@given(
    seen=st.sets(st.tuples(st.integers(0, 3), st.integers(0, 12)), min_size=1, max_size=20),
    queries=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 14)), min_size=1, max_size=20),
    offset=st.sampled_from([0, 2**61]),  # 2**61: the task-by-task search (keys would overflow)
)
def test_accumulator_contains_is_set_membership(
    seen: set[tuple[int, int]], queries: list[tuple[int, int]], offset: int
) -> None:
    keys = [ConditionKey("d", "m", "x")]
    rows = sorted(seen)
    n = len(rows)
    batch = RolloutArrays(
        keys,
        [0] * n,
        [f"t{i}" for i in range(4)],
        [t for t, _ in rows],
        [offset + trial for _, trial in rows],
        [1] * n,
        [2] * n,
        [True] * n,
        [-1] * n,
    )
    acc = accumulate(batch).as_dict()[keys[0]]
    names = ["t2", "zz", "t0", "t3", "t1", "t4"]  # "zz" and "t4" were never seen
    task = np.array([q for q, _ in queries], dtype=np.int64)
    trial = np.array([offset + tr for _, tr in queries], dtype=np.int64)
    found = acc.contains(names, task, trial)
    want = [
        names[q] not in ("zz", "t4") and (int(names[q][1:]), tr) in seen for q, tr in queries
    ]
    assert found.tolist() == want
    # AccumulatorSet.first_repeat: the first query row already seen, or None.
    query = RolloutArrays(
        keys,
        [0] * len(queries),
        names,
        task.tolist(),
        trial.tolist(),
        [1] * len(queries),
        [2] * len(queries),
        [True] * len(queries),
        [-1] * len(queries),
    )
    first = AccumulatorSet([(keys[0], acc)]).first_repeat(query)
    assert first == (want.index(True) if any(want) else None)


@pytest.mark.spec("ACC-STATE", "BOOT-CLUSTER", "CONV-EXACT")
def test_accumulator_messages_and_integer_task_sums() -> None:
    empty = Accumulator.empty()
    with pytest.raises(ValueError, match=r"^an accumulator without rollouts has no metrics \(N >= 1\)$"):
        empty.metrics()
    with pytest.raises(ValueError, match=r"^an accumulator without rollouts has no task sums$"):
        empty.task_sums(["a"])
    keys = [ConditionKey("d", "m", "x")]
    names = [f"t{i}" for i in range(7)]
    # Seven tasks, T = 1..7, FED = 1, 2, ..., one rollout each, so the horizons' lcm is 420.
    batch = RolloutArrays(
        keys,
        [0] * 7,
        names,
        list(range(7)),
        [0] * 7,
        [1, 2, 3, 4, 5, 6, 7],
        [1, 2, 4, 5, 6, 1, 8],
        [True, False, True, False, True, False, True],
        [-1] * 7,  # no labels: the failing rollouts are unlabelled
    )
    acc = accumulate(batch).as_dict()[keys[0]]
    sums = acc.task_sums(names)
    assert sums.X.dtype == np.int64, "per-task sums are exact integers"
    cohort = Cohort(
        T=[1, 2, 3, 4, 5, 6, 7],
        fed=[1, 2, 4, 5, 6, 1, 8],
        Y=[True, False, True, False, True, False, True],
        label_code=[5, 5, -1, -1, -1, 5, -1],
        task=names,
    )
    reference = boot.task_sums(cohort, names)
    assert sums.columns == reference.columns and sums.L == reference.L == 420
    assert np.array_equal(sums.X, reference.X)
    six_missing = "task(s) ['t1', 't2', 't3', 't4', 't5'] are not in the task list"
    with pytest.raises(ValueError, match=re.escape(six_missing)):
        acc.task_sums(["t0"])


@pytest.mark.spec("BOOT-CLUSTER", "CONV-EXACT")
def test_task_sums_switch_to_python_integers_before_int64_overflows() -> None:
    # 43 rollouts of one task with horizons 1..41, 81 and 128: L = lcm = 2628722276875094400
    # (~2^61.2, so L / N is far below 2^62) but the task's sum of L over its 43 rollouts is
    # 43 L ~ 1.1e20 > 2^63: the sums must be Python integers, exactly 43 L.
    horizons = [*range(1, 42), 81, 128]
    L = math.lcm(*horizons)
    assert L == 2628722276875094400 and 43 * L > 2**63
    cohort = Cohort(
        T=horizons,
        fed=[t + 1 for t in horizons],
        Y=[True] * 43,
        label_code=[-1] * 43,
        task=["a"] * 43,
    )
    sums = boot.task_sums(cohort, ["a"])
    assert len(sums.columns) == sums.X.shape[1]
    assert sums.X[0, sums.columns.index("auc_den")] == 43 * L
    assert sums.X[0, sums.columns.index("auc_num")] == sum(t * (L // t) for t in horizons)
    keys = [ConditionKey("d", "m", "x")]
    batch = RolloutArrays(
        keys, [0] * 43, ["a"], [0] * 43, list(range(43)), horizons, [t + 1 for t in horizons],
        [True] * 43, [-1] * 43,
    )
    acc_sums = accumulate(batch).as_dict()[keys[0]].task_sums(["a"])
    assert len(acc_sums.columns) == acc_sums.X.shape[1]
    assert acc_sums.X[0, acc_sums.columns.index("auc_den")] == 43 * L
    assert np.array_equal(acc_sums.X, sums.X)


@pytest.mark.spec("INV-FED-RANGE", "CONV-LABEL-ORDER")
def test_cohort_value_faults_name_the_first_bad_rollout() -> None:
    # Rollout 0 has FED = 1 and rollout 1 FED = T + 1, both valid; rollout 2 is the bad one.
    good = {"T": [2, 2, 2], "fed": [1, 3, 2], "Y": [True] * 3, "label_code": [5, -1, 0], "task": "abc"}
    assert make_cohort(**good).N == 3
    with pytest.raises(ValueError, match=re.escape("'T' must be >= 1: 0")):
        make_cohort(**{**good, "T": [2, 2, 0], "fed": [1, 3, 1]})
    for fed in (0, 4):
        with pytest.raises(ValueError, match=re.escape(f"rollout 2 has T=2, fed={fed}")):
            make_cohort(**{**good, "fed": [1, 3, fed]})
    message = "'label_code' must be -1 exactly for fully executable rollouts, else 0..5"
    for code in ([5, 0, 0], [5, -1, -1], [5, -1, 6], [5, -1, -2]):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            make_cohort(**{**good, "label_code": code})


@pytest.mark.spec("BOOT-PERCENTILE", "BOOT-DROP")
def test_percentile_rows_with_holes_and_empty_rows() -> None:
    # Three rows of B = 2 replicates: as many complete rows (2) as replicates, an all-NaN row
    # (undefined: None) before a row with one NaN (the remaining value alone).
    rows = np.array([[1.0, 3.0], [np.nan, np.nan], [5.0, 9.0]])
    got = boot.percentile_intervals_rows(rows.copy(), 0.5)
    # level 0.5 -> p = 0.25, 0.75; n = 2: jg = 1.25, 1.75 -> 1 + 0.25 * 2 = 1.5 and 2.5.
    assert got == [(1.5, 2.5), None, (6.0, 8.0)]
    holes = np.array([[np.nan, np.nan], [2.0, np.nan], [4.0, 8.0]])
    assert boot.percentile_intervals_rows(holes.copy(), 0.5) == [None, (2.0, 2.0), (5.0, 7.0)]
