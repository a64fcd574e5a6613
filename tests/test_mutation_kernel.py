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
from fractions import Fraction
from typing import Any

import attrs
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
    rows = [(t, offset + trial) for t, trial in sorted(seen)]
    acc = accumulate(_successes(keys[0], [f"t{i}" for i in range(4)], rows)).as_dict()[keys[0]]
    names = ["t2", "zz", "t0", "t3", "t1", "t4"]  # "zz" and "t4" were never seen
    task = np.array([q for q, _ in queries], dtype=np.int64)
    trial = np.array([offset + tr for _, tr in queries], dtype=np.int64)
    found = acc.contains(names, task, trial)
    want = [names[q] not in ("zz", "t4") and (int(names[q][1:]), tr) in seen for q, tr in queries]
    assert found.tolist() == want
    # AccumulatorSet.first_repeat: the first query row already seen, or None.
    query = _successes(keys[0], names, list(zip(task.tolist(), trial.tolist(), strict=True)))
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
        keys,
        [0] * 43,
        ["a"],
        [0] * 43,
        list(range(43)),
        horizons,
        [t + 1 for t in horizons],
        [True] * 43,
        [-1] * 43,
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


# ---------------------------------------------------------------------------------------------
# Accumulator state, JSON and batches: the second round of survivors (tests/mutation.md)


def _state(**change: Any) -> dict[str, Any]:
    """A valid one-task state: (T=2, FED=3, Y=1, fully executable) and (T=1, FED=1, Y=0, schema)."""
    class_y = [0] * 14
    class_y[1] = 1  # class 0 (fully executable), Y = 1
    class_y[2] = 1  # class 1 (schema), Y = 0
    state: dict[str, Any] = {
        "tasks": ["a"],
        "fed_hist": [[1, 0, 1]],
        "T_hist": [[1, 1]],
        "steps_by_T": [[0, 2]],
        "class_y": [class_y],
        "trials": [[0, 0, 2]],
    }
    state.update(change)
    return state


def _repeated(tasks: list[str]) -> dict[str, Any]:
    """The one-task state of :func:`_state` for each of ``tasks`` (their trial ranges not set)."""
    one = _state()
    return {
        "tasks": tasks,
        **{k: one[k] * len(tasks) for k in ("fed_hist", "T_hist", "steps_by_T", "class_y")},
    }


def _acc(**change: Any) -> Accumulator:
    s = _state(**change)
    return Accumulator(s["tasks"], s["fed_hist"], s["T_hist"], s["steps_by_T"], s["class_y"], s["trials"])


@pytest.mark.spec("ACC-STATE")
def test_accumulator_state_faults_are_named_exactly() -> None:
    assert _acc().N == 2 and _acc().metrics().TER == 0.5
    cy = _state()["class_y"][0]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"fed_hist": [[1, 1]]}, "'fed_hist' has shape (1, 2), expected (1, 3)"),
        ({"trials": [[0, 0]]}, "'trials' has shape (1, 2), expected (m, 3)"),
        (
            _repeated(["b", "a"]),
            "'tasks' must be sorted and unique",
        ),
        (
            _repeated(["a", "a"]),
            "'tasks' must be sorted and unique",
        ),
        ({"steps_by_T": [[-1, 2]]}, "'steps_by_T' holds a negative number"),
        ({"trials": [[0, -1, 2]]}, "'trials' holds a negative number"),
        (
            {
                "tasks": ["a", "b"],
                "fed_hist": [[1, 0, 1], [0, 0, 0]],
                "T_hist": [[1, 1], [0, 0]],
                "steps_by_T": [[0, 2], [0, 0]],
                "class_y": [cy, [0] * 14],
            },
            "every task must have at least one rollout",
        ),
        (
            {"fed_hist": [[2, 0, 0]], "T_hist": [[2, 0]], "steps_by_T": [[0, 0]]},
            "'K' must be the longest horizon",
        ),
        ({"class_y": [[0] * 14]}, "'fed_hist', 'T_hist' and 'class_y' must count the same rollouts per task"),
        ({"fed_hist": [[0, 0, 2]]}, "more rollouts with FED > k than with T >= k"),
        ({"steps_by_T": [[0, 3]]}, "'steps_by_T' exceeds T per rollout"),
        (
            {"fed_hist": [[2, 0, 0]], "steps_by_T": [[0, 0]]},
            "more fully executable rollouts than rollouts with FED > 1",
        ),
        ({"trials": [[1, 0, 2]]}, "'trials' must be ranges [first, last + 1) of existing task rows"),
        ({"trials": [[0, 2, 2]]}, "'trials' must be ranges [first, last + 1) of existing task rows"),
        ({"trials": [[0, 0, 1], [0, 1, 2]]}, "'trials' must be sorted, disjoint and coalesced"),
        ({"trials": [[0, 0, 3]]}, "every rollout must have exactly one trial number"),
    ]
    for change, message in cases:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            _acc(**change)
    # A task row equal to the number of tasks is out of range too (row 1 of one task).
    with pytest.raises(ValueError, match=re.escape("of existing task rows")):
        _acc(trials=[[0, 0, 1], [1, 1, 2]])
    no_tasks = {
        "tasks": [],
        "fed_hist": np.zeros((0, 1)),
        "steps_by_T": np.zeros((0, 0)),
        "class_y": np.zeros((0, 14)),
    }
    for change in (
        {"T_hist": np.zeros((0, 0)), "trials": [[0, 0, 1]]},
        {
            "T_hist": np.zeros((0, 2)),
            "fed_hist": np.zeros((0, 3)),
            "steps_by_T": np.zeros((0, 2)),
            "trials": np.zeros((0, 3)),
        },
    ):
        with pytest.raises(ValueError, match=r"^an accumulator without tasks must have K = 0 and no trials$"):
            _acc(**{**no_tasks, **change})
    with pytest.raises(ValueError, match=r"^expected a 2-d array, got shape \(3,\)$"):
        _acc(trials=[0, 0, 2])


@pytest.mark.spec("ACC-STATE", "INV-IMMUTABLE", "CONV-EXACT")
def test_accumulator_holds_read_only_int64_copies() -> None:
    fed = np.array([[1, 0, 1]], dtype=np.int64)
    T_hist = np.array([[1.0, 1.0]])  # floats holding integers are converted
    acc = _acc(fed_hist=fed, T_hist=T_hist)
    for name in ("fed_hist", "T_hist", "steps_by_T", "class_y", "trials"):
        array = getattr(acc, name)
        assert array.dtype == np.int64, name
        assert not array.flags.writeable, name
    assert fed.flags.writeable, "the caller's array is left writeable"
    fed[0, 0] = 7
    assert acc.fed_hist.tolist() == [[1, 0, 1]], "the accumulator copied the caller's array"


@pytest.mark.spec("ACC-JSON")
def test_accumulator_json_faults_are_named_exactly() -> None:
    good = {"K": 2, **_state()}
    assert Accumulator.from_json(good) == _acc()
    empty = Accumulator.empty()
    assert empty.to_json()["K"] == 0 and Accumulator.from_json(empty.to_json()) == empty
    cases: list[tuple[object, str]] = [
        ([1], "an accumulator must be a JSON object, got list"),
        ({**good, "zeta": 1, "alpha": 2}, "unknown field(s) alpha, zeta"),
        ({k: v for k, v in good.items() if k not in ("K", "trials")}, "missing field(s) K, trials"),
        ({**good, "tasks": "a"}, "'tasks' must be a list of strings"),
        ({**good, "tasks": ["a", 1]}, "'tasks' must be a list of strings"),
        ({**good, "K": -1}, "'K' must be an integer >= 0: -1"),
        ({**good, "K": True}, "'K' must be an integer >= 0: True"),
        ({**good, "fed_hist": [[1, 0, 1], [0, 0, 0]]}, "'fed_hist' must be a list of 1 rows"),
        ({**good, "fed_hist": [[1, 0]]}, "'fed_hist'[0] must be a list of 3 integers"),
        ({**good, "fed_hist": [(1, 0, 1)]}, "'fed_hist'[0] must be a list of 3 integers"),
        (
            {**good, "fed_hist": [[1, 0, 2**63]]},
            "'fed_hist'[0] holds 9223372036854775808, not an integer in [0, 2^63)",
        ),
        ({**good, "fed_hist": [[1, 0, -1]]}, "'fed_hist'[0] holds -1, not an integer in [0, 2^63)"),
        ({**good, "fed_hist": [[1, 0, 1.0]]}, "'fed_hist'[0] holds 1.0, not an integer in [0, 2^63)"),
        ({**good, "trials": {"0": [0, 0, 2]}}, "'trials' must be a list of [task row, first, last + 1]"),
        ({**good, "trials": [[0, 0]]}, "'trials'[0] must be a list of 3 integers"),
    ]
    for value, message in cases:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            Accumulator.from_json(value)
    # Counts far beyond 2 * 63 but below 2^63 are accepted: one task with 200 rollouts.
    class_y = [0] * 14
    class_y[1] = 200
    big = {
        "tasks": ["a"],
        "K": 1,
        "fed_hist": [[0, 200]],
        "T_hist": [[200]],
        "steps_by_T": [[200]],
        "class_y": [class_y],
        "trials": [[0, 0, 200]],
    }
    assert Accumulator.from_json(big).N == 200


@pytest.mark.spec("ACC-JSON")
def test_accumulator_set_json_faults_are_named_exactly() -> None:
    key = ConditionKey("d", "m", "x")
    doc = AccumulatorSet([(key, _acc())]).to_json()
    assert AccumulatorSet.from_json(doc).as_dict() == {key: _acc()}
    cases: list[tuple[object, str]] = [
        ([doc], "expected a JSON object"),
        ({**doc, "version": 2}, "not a prefixexec-accumulators document of version 1"),
        ({**doc, "extra": 1}, "expected exactly the keys format, version, conditions"),
        ({**doc, "conditions": {}}, "'conditions' must be a list"),
        ({**doc, "conditions": [doc["conditions"][0], 3]}, "conditions[1] must be an object"),
        (
            {**doc, "conditions": [{**doc["conditions"][0], "model": 1}]},
            "conditions[0] needs string 'dataset', 'model' and 'method'",
        ),
        (
            {**doc, "conditions": [{**doc["conditions"][0], "K": -2}]},
            "conditions[0]: 'K' must be an integer >= 0: -2",
        ),
    ]
    for value, message in cases:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            AccumulatorSet.from_json(value)


@pytest.mark.spec("ACC-STATE", "ACC-MERGE")
def test_accumulator_set_items_and_lookup() -> None:
    k1, k2, k3 = ConditionKey("d", "m", "a"), ConditionKey("d", "m", "b"), ConditionKey("d", "m", "c")
    one, two = _acc(), _acc(tasks=["b"])
    both = AccumulatorSet([(k2, two), (k1, one)])
    assert both.keys() == [k1, k2]
    assert both.get(k1) is one and both.get(k2) is two and both.get(k3) is None
    with pytest.raises(ValueError, match=f"^{re.escape(f'condition {k1} appears twice')}$"):
        AccumulatorSet([(k1, one), (k1, two)])
    bad_items: list[list[tuple[Any, Any]]] = [[("d/m/a", one)], [(k1, "acc")]]  # wrong types on purpose
    for bad in bad_items:
        with pytest.raises(ValueError, match=r"^items must be \(ConditionKey, Accumulator\) pairs$"):
            AccumulatorSet(bad)
    with pytest.raises(ValueError, match=f"^{re.escape(f'condition {k1} has no rollouts')}$"):
        AccumulatorSet([(k1, Accumulator.empty())])


@pytest.mark.spec("ACC-MERGE", "CONV-EXACT")
def test_merge_adds_counts_beyond_float_precision() -> None:
    # One task with 2^60 + 1 fully executable rollouts of T = 1 (trials 0 .. 2^60), merged with
    # one more rollout (trial 2^60 + 1): every count is exact, 2^60 + 2, which float64 cannot hold.
    n = 2**60 + 1

    def part(count: int, first: int) -> Accumulator:
        class_y = [0] * 14
        class_y[1] = count
        return Accumulator(["a"], [[0, count]], [[count]], [[count]], [class_y], [[0, first, first + count]])

    merged = part(n, 0).merge(part(1, n))
    assert float(n + 1) != n + 1
    assert (
        merged.N == n + 1 and merged.T_hist.tolist() == [[n + 1]] and merged.steps_by_T.tolist() == [[n + 1]]
    )
    assert merged.trials.tolist() == [[0, 0, n + 1]]
    other = Accumulator(["b"], [[0, 1]], [[1]], [[1]], [[0, 1] + [0] * 12], [[0, 0, 1]])
    merged2 = part(n, 0).merge(other)
    assert merged2.tasks == ("a", "b") and merged2.counts().tolist() == [n, 1]


def _batch(**change: Any) -> RolloutArrays:
    """Two valid rows of one condition: t0 trial 0 (T=2, FED=3, Y) and t1 trial 0 (T=1, FED=1, schema)."""
    columns: dict[str, Any] = {
        "conditions": [ConditionKey("d", "m", "x")],
        "condition": [0, 0],
        "tasks": ["t0", "t1"],
        "task": [0, 1],
        "trial": [0, 0],
        "T": [2, 1],
        "fed": [3, 1],
        "Y": [True, False],
        "label": [-1, 0],
    }
    columns.update(change)
    return RolloutArrays(**columns)


@pytest.mark.spec("ACC-BATCH")
def test_first_invalid_row_names_the_first_bad_row_and_why() -> None:
    from prefixexec.kernel.accumulator import RowError, first_invalid_row

    assert first_invalid_row(_batch()) is None
    assert first_invalid_row(_batch(), np.array([1, 0])) is None
    cases: list[tuple[dict[str, Any], tuple[int, str] | None]] = [
        ({"fed": [3, 3]}, (1, "'fed' must be in [1, T+1] = [1, 2]: 3")),  # FED = T + 2 on row 1
        ({"T": [2, 1], "fed": [3, 4]}, (1, "'fed' must be in [1, T+1] = [1, 2]: 4")),
        ({"T": [2, 0]}, (1, "'T' must be an integer >= 1: 0")),
        ({"trial": [0, -1]}, (1, "'trial' must be >= 0: -1")),
        ({"label": [-1, 5]}, (1, "label code must be -1..4: 5")),
        ({"label": [-1, -2]}, (1, "label code must be -1..4: -2")),
        ({"label": [0, 0]}, (0, "'label' given for a fully executable rollout (fed = T+1): schema")),
        ({"fed": [2, 1], "label": [3, 4]}, None),  # labelled failures are valid
    ]
    for change, want in cases:
        batch = _batch(**change)
        assert first_invalid_row(batch) == want, change
        assert first_invalid_row(batch, batch.fed - batch.T) == want, change
        if want is None:
            continue
        with pytest.raises(RowError, match=f"^{re.escape(f'row {want[0]}: {want[1]}')}$"):
            accumulate(batch)
    # A one-row batch is checked like any other.
    one = _batch(condition=[0], task=[0], trial=[0], T=[1], fed=[3], Y=[True], label=[-1])
    assert first_invalid_row(one) == (0, "'fed' must be in [1, T+1] = [1, 2]: 3")
    with pytest.raises(RowError, match=r"^row 0: "):
        accumulate(one)


@pytest.mark.spec("ACC-BATCH", "INV-IMMUTABLE", "CONV-EXACT")
def test_batch_columns_are_read_only_int64_and_bool_vectors() -> None:
    # Writeable caller arrays are copied (and stay writeable); int32, uint8 and 2-d (n, 1) inputs
    # become flat int64 / bool columns.
    trial = np.array([0, 0], dtype=np.int32)
    T = np.array([[2], [1]], dtype=np.int64)
    Y = np.array([1, 0], dtype=np.uint8)
    label = np.array([-1, 0], dtype=np.int64)
    batch = _batch(trial=trial, T=T, Y=Y, label=label)
    for name, dtype in (("trial", np.int64), ("T", np.int64), ("fed", np.int64), ("Y", np.bool_)):
        column = getattr(batch, name)
        assert column.dtype == dtype and column.ndim == 1 and not column.flags.writeable, name
    assert trial.flags.writeable and label.flags.writeable
    label[1] = 3
    assert batch.label.tolist() == [-1, 0], "the batch copied the caller's array"
    # Read-only int64 / bool columns (such as Arrow's zero-copy views) are used as they are, and
    # so are read-only index columns of any integer type; other read-only ones are converted.
    ro = {
        name: np.array(values, dtype=dtype)
        for name, values, dtype in (
            ("condition", [0, 0], np.int32),
            ("task", [0, 1], np.uint16),
            ("trial", [0, 0], np.int64),
            ("T", [2, 1], np.int64),
            ("fed", [3, 1], np.int64),
            ("Y", [True, False], np.bool_),
            ("label", [-1, 0], np.int8),
        )
    }
    for array in ro.values():
        array.flags.writeable = False
    zero_copy = _batch(**ro)
    for name, array in ro.items():
        assert getattr(zero_copy, name) is array, name
    converted = {
        "trial": np.array([0, 0], dtype=np.int32),
        "T": np.array([2.0, 1.0]),
        "Y": np.array([1, 0], dtype=np.int8),
        "fed": np.array([[3], [1]], dtype=np.int64),
    }
    for array in converted.values():
        array.flags.writeable = False
    batch = _batch(**converted)
    for name, array in converted.items():
        column = getattr(batch, name)
        assert column is not array and column.ndim == 1 and not column.flags.writeable, name
        assert column.dtype == (np.bool_ if name == "Y" else np.int64), name
    assert accumulate(batch) == accumulate(_batch())


@pytest.mark.spec("ACC-BATCH", "REC-UNIQUE")
def test_first_repeat_looks_past_conditions_it_has_not_seen() -> None:
    seen = accumulate(_batch())
    k_new, k_seen = ConditionKey("a", "m", "x"), ConditionKey("d", "m", "x")
    query = _batch(conditions=[k_new, k_seen], condition=[0, 1], task=[0, 1], trial=[0, 0])
    assert seen.first_repeat(query) == 1
    assert seen.first_repeat(query, 1) is None
    assert AccumulatorSet.empty().first_repeat(query) is None


@pytest.mark.spec("BOOT-PAIRED")
def test_paired_block_equals_each_conditions_own_product() -> None:
    # Three conditions with different horizons (so different column counts) over shared tasks:
    # the one product over their columns side by side gives each condition exactly what its own
    # product with the same resample matrix gives.
    cohorts = {
        "a": Cohort(
            T=[1, 2, 1], fed=[2, 1, 1], Y=[True, False, True], label_code=[-1, 5, 0], task=["x", "y", "z"]
        ),
        "b": Cohort(
            T=[3, 1, 4, 2],
            fed=[2, 2, 5, 3],
            Y=[False, True, True, True],
            label_code=[1, -1, -1, -1],
            task=["x", "y", "z", "z"],
        ),
        "c": Cohort(
            T=[5, 5, 2], fed=[6, 3, 3], Y=[True, False, True], label_code=[-1, 2, -1], task=["x", "y", "z"]
        ),
    }
    settings = boot.BootstrapSettings(B=64, seed=3)
    block = boot.bootstrap_dataset(cohorts, settings)
    W = boot.resample_counts(3, settings.B, settings.seed)
    for key, cohort in cohorts.items():
        alone = boot.replicates(W, boot.task_sums(cohort, ["x", "y", "z"]))
        for name, values in alone.scalars.items():
            assert np.array_equal(block[key].scalars[name], values, equal_nan=True), (key, name)
        assert np.array_equal(block[key].PEC, alone.PEC, equal_nan=True), key
        assert np.array_equal(block[key].PEC_elig, alone.PEC_elig, equal_nan=True), key


@pytest.mark.spec("BOOT-DROP")
def test_intervals_count_the_left_out_replicates_per_depth() -> None:
    # K = 2 < 5 scalars and K = 7 > 5: dropped_PEC_elig[k-1] is the number of NaN replicates at depth k.
    for T in ([1, 2, 2, 1], [7, 1, 3, 6]):
        fed = [1, 2, 1, 2]
        codes = [-1 if f == t + 1 else c for f, t, c in zip(fed, T, [0, 5, 1, 5], strict=True)]
        cohort = Cohort(
            T=T, fed=fed, Y=[True, False, True, False], label_code=codes, task=["p", "q", "r", "s"]
        )
        reps = boot.bootstrap_dataset({"k": cohort}, boot.BootstrapSettings(B=50, seed=1))["k"]
        found = boot.intervals(reps, 1, 3, 0.9)
        K = max(T)
        assert len(found.PEC_elig) == K
        assert found.dropped_PEC_elig == tuple(int(np.isnan(reps.PEC_elig[:, k]).sum()) for k in range(K))
        assert any(found.dropped_PEC_elig), "some depth has resamples without a rollout that long"
        assert found.dropped == {n: int(np.isnan(v).sum()) for n, v in reps.scalars.items()}


# ---------------------------------------------------------------------------------------------
# Third round: survivors of the full run (tests/mutation.md); explicit cases where a property
# test with the mutation profile's 20 examples did not reach the boundary.


def _successes(key: ConditionKey, tasks: list[str], rows: list[tuple[int, int]]) -> RolloutArrays:
    """A batch of one condition: one T=1, FED=2 success per (task row, trial) in ``rows``."""
    n = len(rows)
    return RolloutArrays(
        [key],
        [0] * n,
        tasks,
        [j for j, _ in rows],
        [t for _, t in rows],
        [1] * n,
        [2] * n,
        [True] * n,
        [-1] * n,
    )


def _seen(tasks: list[str], trials: list[list[int]]) -> Accumulator:
    """The accumulator of one T=1, FED=2 success per (task, trial) listed."""
    key = ConditionKey("d", "m", "x")
    rows = [(j, t) for j, ts in enumerate(trials) for t in ts]
    return accumulate(_successes(key, tasks, rows)).as_dict()[key]


@pytest.mark.spec("ACC-BATCH", "REC-UNIQUE")
def test_contains_at_the_boundaries_of_its_key_space() -> None:
    i64 = np.int64
    one_range = _seen(["a"], [[0, 1, 2]])
    assert one_range.trials.shape == (1, 3)
    # The first range of the first task (searchsorted position 0) and a single-range accumulator.
    assert one_range.contains(["a"], np.array([0, 0, 0]), np.array([0, 2, 3], dtype=i64)).tolist() == [
        True,
        True,
        False,
    ]
    # Query trials beyond every stored range must not run into the next task's keys.
    two = _seen(["a", "b"], [[0], [0]])
    assert two.contains(["a", "b"], np.array([0, 0, 1]), np.array([2, 1, 0], dtype=i64)).tolist() == [
        False,
        False,
        True,
    ]
    wide = _seen(["a", "b"], [[0, 1, 2, 3], [0]])
    assert wide.contains(["a", "b"], np.array([0, 1, 1]), np.array([3, 3, 4], dtype=i64)).tolist() == [
        True,
        False,
        False,
    ]
    # Four tasks with trials near 2^61: row x span would pass 2^63, so the search goes task by task.
    big = 2**61
    four = _seen(["a", "b", "c", "d"], [[big], [big + 1], [big], [big + 2]])
    query = np.array([big + 2, big + 1, big, big + 2, big], dtype=i64)
    assert four.contains(["a", "b", "c", "d"], np.array([3, 1, 2, 0, 3]), query).tolist() == [
        True,
        True,
        True,
        False,
        False,
    ]
    # AccumulatorSet.first_repeat of a one-row batch that repeats.
    key = ConditionKey("d", "m", "x")
    single = RolloutArrays([key], [0], ["a"], [0], [1], [1], [2], [True], [-1])
    assert AccumulatorSet([(key, one_range)]).first_repeat(single) == 0


@pytest.mark.spec("ACC-STATE")
def test_trial_ranges_must_be_canonical_across_tasks() -> None:
    def three(trials: list[list[int]]) -> Accumulator:
        return _acc(**_repeated(["a", "b", "c"]), trials=trials)

    assert three([[0, 0, 2], [1, 0, 2], [2, 5, 7]]).N == 6
    message = "^'trials' must be sorted, disjoint and coalesced$"
    for trials in (
        [[0, 0, 2], [1, 0, 1], [1, 1, 2], [2, 0, 2]],  # task 1's ranges touch: not coalesced
        [[1, 0, 2], [0, 0, 2], [2, 0, 2]],  # task rows out of order
        [[0, 0, 2], [2, 0, 2], [1, 0, 2]],  # out of order after the first row
        [[0, 0, 2], [1, 0, 1], [1, 0, 1], [2, 0, 2]],  # task 1 repeats a range
    ):
        with pytest.raises(ValueError, match=message):
            three(trials)


@pytest.mark.spec("ACC-MERGE", "REC-UNIQUE")
def test_merge_names_the_first_repeated_trial() -> None:
    from prefixexec.kernel.accumulator import DuplicateRollout

    wide = _seen(["a"], [list(range(10))])
    narrow = _seen(["a"], [[2]])
    for left, right in ((wide, narrow), (narrow, wide)):
        with pytest.raises(DuplicateRollout, match=r"^task 'a', trial 2 occurs twice$") as info:
            left.merge(right)
        assert (info.value.condition, info.value.task, info.value.trial, info.value.row) == (
            None,
            "a",
            2,
            None,
        )
    key = ConditionKey("d", "m", "x")
    with pytest.raises(DuplicateRollout, match=r"^d / m / x: task 'a', trial 2 occurs twice$"):
        AccumulatorSet([(key, wide)]).merge(AccumulatorSet([(key, narrow)]))


@pytest.mark.spec("ACC-BATCH", "REC-UNIQUE")
def test_row_errors_and_duplicates_keep_their_fields_and_pickle() -> None:
    import pickle

    from prefixexec.kernel.accumulator import DuplicateRollout, RowError

    key = ConditionKey("d", "m", "x")
    plain = DuplicateRollout(None, "t", 3, 7)
    assert str(plain) == "task 't', trial 3 occurs twice" and plain.row == 7
    named = plain.with_condition(key)
    assert str(named) == "d / m / x: task 't', trial 3 occurs twice"
    assert (named.condition, named.task, named.trial, named.row) == (key, "t", 3, 7)
    for error in (plain, named, RowError(4, "'T' must be an integer >= 1: 0")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error)
        assert back.__reduce__() == error.__reduce__()
    assert str(RowError(4, "bad")) == "row 4: bad"


@pytest.mark.spec("BOOT-CLUSTER", "CONV-EXACT")
def test_accumulator_task_sums_are_exact_beyond_float_precision() -> None:
    # One task: 2^60 + 1 fully executable successes (T = 1, FED = 2) and 2^60 + 1 recovered
    # schema failures (T = 1, FED = 1, Y = 1); none of the sums below is a float64 value.
    n = 2**60 + 1
    class_y = [0] * 14
    class_y[1] = n  # fully executable, Y = 1
    class_y[3] = n  # schema, Y = 1
    acc = Accumulator(["a"], [[n, n]], [[2 * n]], [[n]], [class_y], [[0, 0, 2 * n]])
    sums = acc.task_sums(["a"])
    got = dict(zip(sums.columns, sums.X[0].tolist(), strict=True))
    want = {
        "count": 2 * n,
        "executable": n,
        "auc_num": n,
        "auc_den": 2 * n,
        "fed": 3 * n,
        "success": 2 * n,
        "eligible": n,
        "recovered": n,
        "surv1": n,
        "nk1": 2 * n,
    }
    assert got == want
    assert all(float(v) != v for v in want.values())
    # 43 tasks, one rollout each, horizons 1..41, 81, 128: L ~ 2^61.2 > 2^53 while every per-task
    # sum stays in int64; L // t must be exact (same as the cohort path's sums).
    horizons = [*range(1, 42), 81, 128]
    names = [f"t{i:02d}" for i in range(43)]
    batch = RolloutArrays(
        [ConditionKey("d", "m", "x")],
        [0] * 43,
        names,
        list(range(43)),
        [0] * 43,
        horizons,
        [t for t in horizons],
        [False] * 43,
        [4] * 43,  # FED = T: labelled (information) failures at the last step
    )
    acc43 = accumulate(batch).as_dict()[ConditionKey("d", "m", "x")]
    cohort = Cohort(T=horizons, fed=horizons, Y=[False] * 43, label_code=[4] * 43, task=names)
    reference = boot.task_sums(cohort, names)
    mine = acc43.task_sums(names)
    assert mine.L == reference.L == math.lcm(*horizons) and mine.X.dtype == np.int64
    assert np.array_equal(mine.X, reference.X)


@pytest.mark.spec("MON-CHECK", "MON-COMMIT", "MON-OUTCOME")
def test_monitor_keeps_task_observations_and_rejected_verdicts() -> None:
    from prefixexec.kernel import NO_TOOL, PrefixMonitor
    from prefixexec.kernel.monitor import RejectedCommitError

    @attrs.frozen
    class Counting:
        """Accepts calls named "ok" (observation: the count so far), and the no-tool action in
        task "quiet"; rejects others (schema)."""

        def initial_state(self, task: str) -> int:
            return 100 if task == "quiet" else 0

        def step(self, state: int, action: Action) -> Accepted[int] | Rejected:
            if (isinstance(action, ToolCall) and action.name == "ok") or (action == NO_TOOL and state >= 100):
                return Accepted(state + 1, observation=f"count {state + 1}")
            return Rejected((Label.SCHEMA,), f"{action!r} is not ok")

    ok, bad = ToolCall("ok", {}), ToolCall("bad", {})
    monitor: PrefixMonitor[str, int] = PrefixMonitor(Counting(), "task-7")
    assert monitor.task == "task-7"
    assert monitor.check(ok).observation == "count 1"
    first = monitor.commit(ok, strict=True)
    assert first.executable and first.observation == "count 1" and monitor.state == 1
    with pytest.raises(RejectedCommitError, match=r"^action 2 is not executable: ") as info:
        monitor.commit(bad, strict=True)
    assert info.value.verdict.depth == 2 and info.value.verdict.label is Label.SCHEMA
    assert monitor.commit(bad).label is Label.SCHEMA
    with pytest.raises(
        RejectedCommitError, match=r"^action 3 is not executable: the prefix is already"
    ) as after:
        monitor.commit(ok, strict=True)
    assert after.value.verdict is not None and after.value.verdict.depth == 3
    out = monitor.outcome()
    assert (out.T, out.fed, out.label, out.actions) == (2, 2, Label.SCHEMA, (ok, bad))
    clean: PrefixMonitor[str, int] = PrefixMonitor(Counting(), "t")
    clean.commit(ok)
    assert clean.outcome().actions == (ok,) and clean.outcome().fed == 2
    # No committed action: the trajectory is the terminal no-tool action, here rejected.
    idle = PrefixMonitor(Counting(), "t").outcome()
    assert (idle.T, idle.fed, idle.label, idle.actions) == (1, 1, Label.SCHEMA, (NO_TOOL,))
    quiet = PrefixMonitor(Counting(), "quiet").outcome()
    assert (quiet.T, quiet.fed, quiet.label, quiet.actions) == (1, 2, None, (NO_TOOL,))


@pytest.mark.spec("CMP-PAIRED", "BOOT-DROP")
def test_difference_interval_counts_the_undefined_differences() -> None:
    treatment = np.array([0.5, np.nan, 0.25, 0.75, np.nan])
    baseline = np.array([0.25, 0.5, np.nan, 0.25, np.nan])
    interval, dropped = boot.difference_interval(treatment, baseline, 0.9)
    assert dropped == 3  # rows 1, 2 and 4 have a NaN on either side
    assert interval == boot.percentile_interval(np.array([0.25, 0.5]), 0.9)


@pytest.mark.spec("ACC-STATE", "CONV-EXACT")
def test_trial_numbers_are_counted_exactly() -> None:
    # 2^60 + 1 rollouts but trial ranges covering only 2^60 numbers: float64 would see them equal.
    n = 2**60 + 1
    class_y = [0] * 14
    class_y[1] = n
    assert float(n) == float(n - 1)
    with pytest.raises(ValueError, match=r"^every rollout must have exactly one trial number$"):
        Accumulator(["a"], [[0, n]], [[n]], [[n]], [class_y], [[0, 0, n - 1]])
    assert Accumulator(["a"], [[0, n]], [[n]], [[n]], [class_y], [[0, 0, n]]).N == n


@pytest.mark.spec("ACC-STATE", "EQ-12")
def test_accumulator_decomposition_of_two_executable_rollouts() -> None:
    # Two fully executable rollouts, one successful: s = 1/2 (Eq. (12)), as compute_metrics says.
    key = ConditionKey("d", "m", "x")
    batch = RolloutArrays([key], [0, 0], ["a"], [0, 0], [0, 1], [1, 1], [2, 2], [True, False], [-1, -1])
    got = accumulate(batch).as_dict()[key].metrics().decomposition
    assert (got.q, got.s, got.uninterrupted, got.fully_executable) == (1, Fraction(1, 2), 1, 2)


@pytest.mark.spec("ACC-BATCH")
def test_batch_column_faults_are_named_exactly() -> None:
    assert len(_batch()) == 2
    for name in ("task", "trial", "T", "fed", "Y", "label"):
        with pytest.raises(ValueError, match=f"^'{name}' has 1 entries, 'condition' has 2$"):
            _batch(**{name: [0]})
    for column, values, message in (
        ("condition", [0, 1], "'condition' must index 'conditions'"),
        ("condition", [-1, 0], "'condition' must index 'conditions'"),
        ("task", [0, 2], "'task' must index 'tasks'"),
        ("task", [-1, 0], "'task' must index 'tasks'"),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            _batch(**{column: values})
    empty = _batch(condition=[], task=[], trial=[], T=[], fed=[], Y=[], label=[], conditions=[], tasks=[])
    assert len(empty) == 0 and accumulate(empty) == AccumulatorSet.empty()


@pytest.mark.spec("ACC-BATCH", "REC-UNIQUE")
@pytest.mark.parametrize("offset", [0, 10**6, 10**9, 2**40, 2**55, 2**60, 2**61])
def test_trial_runs_on_every_key_path(offset: int) -> None:
    # Offsets pick the flag-array path, the int32 sort path (keys below 2^31, and with 10^9 up to
    # 3 x 10^9 in [2^31, 2^32): int64), the int64 sort path (with 2^55 and 2^60 its keys are
    # beyond float64's exact integers: runs computed in floats would be off) and the lexsort path.
    key = ConditionKey("d", "m", "x")
    pairs = [(0, 5), (1, 0), (0, 3), (0, 4), (2, 9), (1, 1), (0, 0), (2, 7)]
    n = len(pairs)

    def batch(rows: list[tuple[int, int]]) -> RolloutArrays:
        return _successes(key, ["a", "b", "c"], [(t, offset + tr) for t, tr in rows])

    acc = accumulate(batch(pairs)).as_dict()[key]
    want = [
        [0, offset, offset + 1],
        [0, offset + 3, offset + 6],
        [1, offset, offset + 2],
        [2, offset + 7, offset + 8],
        [2, offset + 9, offset + 10],
    ]
    assert acc.trials.tolist() == want and acc.N == n
    from prefixexec.kernel.accumulator import DuplicateRollout

    repeated = [*pairs[:5], (2, 9), *pairs[5:]]  # row 5 repeats row 4
    with pytest.raises(
        DuplicateRollout, match=f"^d / m / x: task 'c', trial {offset + 9} occurs twice$"
    ) as info:
        accumulate(batch(repeated))
    assert info.value.row == 5


@pytest.mark.spec("EQ-1", "INV-FED-RANGE")
def test_outcome_fields_are_checked_with_exact_messages() -> None:
    assert Outcome(T=1, fed=1).fed == 1 and Outcome(T=3, fed=4).fed == 4 and Outcome(T=2, fed=2).T == 2
    cases: list[tuple[dict[str, Any], str]] = [
        ({"T": True, "fed": 1}, "'T' must be an integer >= 1: True"),
        ({"T": 2.0, "fed": 1}, "'T' must be an integer >= 1: 2.0"),
        ({"T": 0, "fed": 1}, "'T' must be an integer >= 1: 0"),
        ({"T": 2, "fed": True}, "'fed' must be an integer: True"),
        ({"T": 2, "fed": "1"}, "'fed' must be an integer: '1'"),
        ({"T": 2, "fed": 0}, "'fed' must be in [1, T+1] = [1, 3]: 0"),
        ({"T": 2, "fed": 4}, "'fed' must be in [1, T+1] = [1, 3]: 4"),
    ]
    for fields, message in cases:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            Outcome(**fields)
    call = ToolCall("f", {})
    assert Outcome(T=2, fed=3, actions=[call, call]).actions == (call, call)
