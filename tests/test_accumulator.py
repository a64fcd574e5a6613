"""Mergeable accumulators: exactness, merge laws, JSON, batch checks (spec/streaming.md ACC-*)."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixexec.adapters import InputError
from prefixexec.inference import evaluate, evaluate_accumulators
from prefixexec.kernel import ConditionKey, Label, Outcome, Rollout, compute_metrics, group_by_condition
from prefixexec.kernel.accumulator import (
    Accumulator,
    AccumulatorSet,
    DuplicateRollout,
    RolloutArrays,
    RowError,
    accumulate,
    merge_all,
)
from prefixexec.kernel.bootstrap import BootstrapSettings, task_sums

from strategies import outcomes

KEYS = [ConditionKey("d", "m", "react"), ConditionKey("d", "m", "plan"), ConditionKey("e", "m", "react")]


@st.composite
def rollout_sets(draw: st.DrawFn, max_tasks: int = 6, max_trials: int = 4, max_t: int = 8) -> list[Rollout]:
    """Rollouts of up to three conditions; each (condition, task) has distinct trial numbers."""
    out: list[Rollout] = []
    for key in draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=3, unique=True)):
        tasks = draw(st.lists(st.integers(0, max_tasks), min_size=1, max_size=max_tasks, unique=True))
        for task in tasks:
            trials = draw(st.lists(st.integers(0, 9), min_size=1, max_size=max_trials, unique=True))
            for trial in trials:
                outcome = draw(outcomes(max_t))
                out.append(Rollout(key, f"t{task}", trial, outcome, draw(st.booleans())))
    return out


def assert_valid_states(accs: AccumulatorSet) -> None:
    """Each accumulator, as accumulate or merge built it without checking (Accumulator._built),
    passes the checking constructor (ACC-STATE) and equals the accumulator it makes."""
    for _, acc in accs.items:
        fields = (acc.tasks, acc.fed_hist, acc.T_hist, acc.steps_by_T, acc.class_y, acc.trials)
        assert Accumulator(*fields) == acc
        assert all(a.dtype == np.int64 and not a.flags.writeable for a in fields[1:])


@pytest.mark.spec("ACC-STATE", "CONV-EXACT")
@given(rollout_sets())
def test_metrics_and_task_sums_equal_the_cohorts(rollouts: list[Rollout]) -> None:
    accs = AccumulatorSet.from_rollouts(rollouts)
    assert_valid_states(accs)
    cohorts = group_by_condition(rollouts)
    assert accs.keys() == list(cohorts)
    union = sorted({r.task_id for r in rollouts} | {"zz-absent"})
    for key, acc in accs.items:
        assert acc.metrics() == compute_metrics(cohorts[key])
        ours, theirs = acc.task_sums(union), task_sums(cohorts[key], union)
        assert np.array_equal(ours.X, theirs.X) and ours.X.dtype == theirs.X.dtype
        assert (ours.columns, ours.L, ours.K) == (theirs.columns, theirs.L, theirs.K)


@pytest.mark.spec("ACC-STATE")
def test_state_tables_by_hand() -> None:
    # Two rollouts of task a (T=2, FED=3, Y=1: fully executable; T=3, FED=1, Y=1, schema) and one of
    # task b (T=1, FED=1, Y=0, unlabelled), trials 0, 1 and 5.
    key = KEYS[0]
    acc = AccumulatorSet.from_rollouts(
        [
            Rollout(key, "a", 0, Outcome(2, 3), True),
            Rollout(key, "a", 1, Outcome(3, 1, Label.SCHEMA), True),
            Rollout(key, "b", 5, Outcome(1, 1), False),
        ]
    ).as_dict()[key]
    assert acc.tasks == ("a", "b") and acc.K == 3
    assert acc.fed_hist.tolist() == [[1, 0, 1, 0], [1, 0, 0, 0]]
    assert acc.T_hist.tolist() == [[0, 1, 1], [1, 0, 0]]
    assert acc.steps_by_T.tolist() == [[0, 2, 0], [0, 0, 0]]
    # class_y columns 2c + y: c = 0 executable, 1 schema, ..., 6 unlabelled.
    expected = np.zeros((2, 14), dtype=np.int64)
    expected[0, 2 * 0 + 1] = 1
    expected[0, 2 * 1 + 1] = 1
    expected[1, 2 * 6 + 0] = 1
    assert np.array_equal(acc.class_y, expected)
    assert acc.trials.tolist() == [[0, 0, 2], [1, 5, 6]]


def _state(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "tasks": ["a"],
        "K": 2,
        "fed_hist": [[1, 0, 1]],
        "T_hist": [[0, 2]],
        "steps_by_T": [[0, 2]],
        "class_y": [[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]],
        "trials": [[0, 0, 2]],
    }
    return base | changes


BAD_STATES: list[tuple[dict[str, Any], str]] = [
    (_state(T_hist=[[1, 2]]), "count the same rollouts"),
    (
        _state(
            fed_hist=[[0, 0, 3]],
            T_hist=[[2, 1]],
            class_y=[[3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
            trials=[[0, 0, 3]],
        ),
        "FED > k",
    ),
    (_state(steps_by_T=[[0, 5]]), "exceeds T"),
    (_state(class_y=[[1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]), "more fully executable"),
    (_state(trials=[[0, 0, 1], [0, 1, 2]]), "coalesced"),
    (_state(trials=[[0, 0, 3]]), "exactly one trial"),
    (_state(K=3, fed_hist=[[1, 0, 1, 0]], T_hist=[[0, 2, 0]], steps_by_T=[[0, 2, 0]]), "longest horizon"),
    (_state(tasks=["a", "b"]), "'fed_hist' must be a list of 2 rows"),
    (
        _state(
            tasks=["b", "a"],
            fed_hist=[[1, 0, 1]] * 2,
            T_hist=[[0, 2]] * 2,
            steps_by_T=[[0, 2]] * 2,
            class_y=[[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]] * 2,
            trials=[[0, 0, 2], [1, 0, 2]],
        ),
        "sorted and unique",
    ),
    (_state(fed_hist=[[1, 0, -1]]), "not an integer in [0, 2^63)"),
    (_state(fed_hist=[[1, 0, True]]), "not an integer"),
    (_state(extra=1), "unknown field(s) extra"),
    ({k: v for k, v in _state().items() if k != "trials"}, "missing field(s) trials"),
]


@pytest.mark.spec("ACC-STATE", "ACC-JSON")
@pytest.mark.parametrize(("state", "message"), BAD_STATES)
def test_impossible_states_are_rejected(state: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Accumulator.from_json(state)
    assert message in str(info.value)


@pytest.mark.spec("ACC-JSON")
def test_the_reference_state_itself_is_accepted() -> None:
    # The base of BAD_STATES is valid: two rollouts of T = 2 (one FED 1 unlabelled, one FED 3).
    acc = Accumulator.from_json(_state())
    assert acc.N == 2 and acc.metrics().TER == 0.5


@pytest.mark.spec("ACC-MERGE", "INV-ADDITIVE", "INV-PERM")
@settings(max_examples=60)
@given(rollout_sets(), st.integers(1, 5), st.randoms(use_true_random=False))
def test_any_split_merged_in_any_order_equals_all_at_once(
    rollouts: list[Rollout], parts: int, rnd: random.Random
) -> None:
    whole = AccumulatorSet.from_rollouts(rollouts)
    shuffled = rollouts[:]
    rnd.shuffle(shuffled)
    pieces = [AccumulatorSet.from_rollouts(shuffled[i::parts]) for i in range(parts)]
    rnd.shuffle(pieces)
    # A random binary merge tree over the pieces.
    while len(pieces) > 1:
        i = rnd.randrange(len(pieces) - 1)
        pieces[i : i + 2] = [pieces[i].merge(pieces[i + 1])]
        assert_valid_states(pieces[i])
    assert pieces[0] == whole
    assert merge_all(reversed([AccumulatorSet.from_rollouts([r]) for r in rollouts])) == whole


@pytest.mark.spec("ACC-MERGE")
@settings(max_examples=300)
@given(rollout_sets(max_tasks=8, max_trials=6), st.randoms(use_true_random=False))
def test_merge_laws(rollouts: list[Rollout], rnd: random.Random) -> None:
    # Three parts disjoint in (condition, task, trial): each rollout of one drawn set goes to one
    # part at random (one rollout set a example instead of three, which made most of this test's
    # time); parts share conditions and tasks, and a part may be empty.
    owner = [rnd.randrange(3) for _ in rollouts]
    a, b, c = (AccumulatorSet.from_rollouts([r for r, o in zip(rollouts, owner, strict=True) if o == i])
               for i in range(3))  # fmt: skip
    empty = AccumulatorSet.empty()
    assert_valid_states(a.merge(b).merge(c))
    assert a.merge(b) == b.merge(a)
    assert a.merge(b).merge(c) == a.merge(b.merge(c))
    assert a.merge(empty) == a == empty.merge(a)
    for _, acc in a.items:
        assert acc.merge(Accumulator.empty()) == acc == Accumulator.empty().merge(acc)


@pytest.mark.spec("ACC-MERGE", "REC-UNIQUE")
@given(rollout_sets(), st.data())
def test_a_rollout_in_both_parts_is_rejected(rollouts: list[Rollout], data: st.DataObject) -> None:
    shared = data.draw(st.sampled_from(rollouts))
    other = [r for r in rollouts if r is not shared]
    left = AccumulatorSet.from_rollouts([shared])
    # The repeat may differ in outcome and success: the key alone decides.
    twin = Rollout(shared.condition, shared.task_id, shared.trial, Outcome(1, 1), not shared.success)
    right = AccumulatorSet.from_rollouts([*other, twin])
    with pytest.raises(DuplicateRollout) as info:
        left.merge(right)
    exc = info.value
    assert (exc.condition, exc.task, exc.trial) == (shared.condition, shared.task_id, shared.trial)
    with pytest.raises(DuplicateRollout):
        right.merge(left)


@pytest.mark.spec("ACC-JSON")
@given(rollout_sets())
def test_json_round_trip_is_lossless(rollouts: list[Rollout]) -> None:
    accs = AccumulatorSet.from_rollouts(rollouts)
    text = json.dumps(accs.to_json())
    back = AccumulatorSet.from_json(json.loads(text))
    assert back == accs
    assert json.dumps(back.to_json()) == text


FORMAT = {"format": "prefixexec-accumulators", "version": 1}
BAD_ENTRY = {"dataset": "d", "model": "m", "method": "x", **_state(steps_by_T=[[0, 9]])}


@pytest.mark.spec("ACC-JSON")
@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "expected a JSON object"),
        ({"format": "other", "version": 1, "conditions": []}, "not a prefixexec-accumulators"),
        ({**FORMAT, "conditions": [], "x": 1}, "exactly the keys"),
        ({**FORMAT, "conditions": [{"dataset": "d"}]}, "conditions[0]"),
        ({**FORMAT, "conditions": [BAD_ENTRY]}, "conditions[0]: 'steps_by_T' exceeds T"),
    ],
)
def test_bad_json_documents(document: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        AccumulatorSet.from_json(document)
    assert message in str(info.value)


def _equal_results(a: Any, b: Any) -> bool:
    """ConditionResults equal, replicate arrays compared with NaN == NaN."""
    if (a.key, a.metrics, a.intervals) != (b.key, b.metrics, b.intervals):
        return False
    if a.replicates is None or b.replicates is None:
        return a.replicates is b.replicates
    ra, rb = a.replicates, b.replicates
    same = all(np.array_equal(ra.scalars[k], rb.scalars[k], equal_nan=True) for k in ra.scalars)
    return (
        same
        and np.array_equal(ra.PEC, rb.PEC, equal_nan=True)
        and np.array_equal(ra.PEC_elig, rb.PEC_elig, equal_nan=True)
    )


@pytest.mark.spec("STREAM-SCORE", "BOOT-CLUSTER", "BOOT-PAIRED")
@settings(max_examples=40)
@given(rollout_sets(), st.integers(0, 2**16), st.booleans())
def test_evaluate_from_accumulators_equals_evaluate(rollouts: list[Rollout], seed: int, paired: bool) -> None:
    accs = AccumulatorSet.from_rollouts(rollouts)
    boot = BootstrapSettings(B=50, seed=seed)
    for s in (None, boot):
        try:
            expected = evaluate(rollouts, s, paired=paired)
        except InputError as exc:  # pairing errors must be the same too
            with pytest.raises(type(exc)) as info:
                evaluate_accumulators(accs, s, paired=paired)
            assert str(info.value) == str(exc)
            continue
        got = evaluate_accumulators(accs, s, paired=paired)
        assert len(got) == len(expected)
        assert all(_equal_results(a, b) for a, b in zip(got, expected, strict=True))


@pytest.mark.spec("ACC-STATE")
def test_auc_numerator_beyond_int64_stays_exact() -> None:
    # Horizons 1..60: L = lcm(1..60) ~ 9.4e25 > 2^63, so the per-task sums are Python integers.
    key = KEYS[0]
    rollouts = [Rollout(key, f"t{t}", 0, Outcome(t, t), t % 2 == 0) for t in range(1, 61)]
    acc = AccumulatorSet.from_rollouts(rollouts).as_dict()[key]
    sums = acc.task_sums(list(acc.tasks))
    assert sums.L == math.lcm(*range(1, 61)) and sums.X.dtype == object
    # Task t60 (T = 60, FED = 60): auc_num = (60 - 1) * L / 60, exactly.
    row = acc.tasks.index("t60")
    assert sums.X[row, sums.columns.index("auc_num")] == 59 * (sums.L // 60)
    results = evaluate_accumulators(AccumulatorSet.from_rollouts(rollouts), BootstrapSettings(B=20, seed=3))
    assert results[0].metrics == compute_metrics(group_by_condition(rollouts)[key])
    assert results[0].intervals is not None and results[0].intervals.scalars["AUC_PEC"] is not None


# ---------------------------------------------------------------------------------------------
# Batches


def _batch(rows: list[tuple[int, int, int, int, int, bool, int]], tasks: int = 3) -> RolloutArrays:
    """Rows (condition, task, trial, T, fed, Y, label) over KEYS and tasks t0..."""
    cols = list(zip(*rows, strict=True)) if rows else [[]] * 7
    return RolloutArrays(KEYS, cols[0], [f"t{i}" for i in range(tasks)], *cols[1:])


GOOD = (0, 0, 0, 2, 3, True, -1)


@pytest.mark.spec("ACC-BATCH", "INV-FED-RANGE", "REC-OUTCOME")
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ((0, 1, -1, 2, 3, True, -1), "'trial' must be >= 0: -1"),
        ((0, 1, 0, 0, 1, True, -1), "'T' must be an integer >= 1: 0"),
        ((0, 1, 0, 2, 4, True, -1), "'fed' must be in [1, T+1] = [1, 3]: 4"),
        ((0, 1, 0, 2, 0, True, -1), "'fed' must be in [1, T+1] = [1, 3]: 0"),
        ((0, 1, 0, 2, 3, True, 0), "'label' given for a fully executable rollout (fed = T+1): schema"),
        ((0, 1, 0, 2, 1, True, 7), "label code must be -1..4: 7"),
    ],
)
def test_first_invalid_row_is_named(bad: tuple[int, int, int, int, int, bool, int], message: str) -> None:
    rows = [GOOD, (1, 0, 0, 1, 1, False, 2), bad, (0, 2, 0, 0, 0, True, -1)]  # row 3 is bad too
    with pytest.raises(RowError) as info:
        accumulate(_batch(rows))
    assert (info.value.row, info.value.what) == (2, message)


@pytest.mark.spec("ACC-BATCH", "REC-UNIQUE")
def test_earliest_fault_wins_between_repeat_and_invalid_row() -> None:
    repeat = (0, 0, 0, 1, 1, False, -1)  # repeats row 0's (condition, task, trial)
    invalid = (0, 1, 0, 0, 1, True, -1)
    with pytest.raises(DuplicateRollout) as dup:
        accumulate(_batch([GOOD, repeat, invalid]))
    assert (dup.value.row, dup.value.condition, dup.value.task, dup.value.trial) == (1, KEYS[0], "t0", 0)
    with pytest.raises(RowError) as row:
        accumulate(_batch([GOOD, invalid, repeat]))
    assert row.value.row == 1


@pytest.mark.spec("ACC-BATCH", "ACC-STATE")
@pytest.mark.parametrize("offset", [0, 2**31, 2**61])
def test_trial_ranges_for_every_key_width(offset: int) -> None:
    # Trial numbers near 0 (int32 sort keys), 2^31 (int64 keys) and 2^61 (lexicographic sort):
    # the same ranges, shifted. Task t0 has trials 0, 1, 2, 5; t1 has 3, 4.
    rows = [(0, 0, offset + tr, 1, 2, True, -1) for tr in (5, 0, 2, 1)]
    rows += [(0, 1, offset + tr, 1, 1, False, -1) for tr in (4, 3)]
    acc = accumulate(_batch(rows)).as_dict()[KEYS[0]]
    assert (acc.trials - [0, offset, offset]).tolist() == [[0, 0, 3], [0, 5, 6], [1, 3, 5]]
    with pytest.raises(DuplicateRollout) as info:
        accumulate(_batch([*rows, (0, 1, offset + 4, 1, 1, False, -1)]))
    assert info.value.row == 6 and info.value.trial == offset + 4


@pytest.mark.spec("ACC-BATCH", "REC-UNIQUE")
@pytest.mark.parametrize("offset", [0, 2**61])
def test_first_repeat_against_earlier_batches(offset: int) -> None:
    # State: t0 trials 0-2 and 7, t1 trial 4; the batch's row 2 is the first one seen before.
    state = accumulate(_batch([(0, 0, offset + tr, 1, 1, False, -1) for tr in (0, 1, 2, 7)]))
    state = state.merge(accumulate(_batch([(0, 1, offset + 4, 1, 1, False, -1)])))
    rows = [(0, 3), (1, 4), (0, 7), (1, 4), (2, 0)]  # (task, trial - offset)
    rows_cond = [0, 1, 0, 0, 0]  # row 1 is of another condition, so it is new
    batch = _batch([(c, t, offset + tr, 1, 1, False, -1) for c, (t, tr) in zip(rows_cond, rows, strict=True)])
    assert state.first_repeat(batch) == 2
    assert state.first_repeat(batch, 2) is None
    with pytest.raises(DuplicateRollout):
        state.merge(accumulate(batch))


@pytest.mark.spec("ACC-BATCH")
def test_many_sparse_cells_and_repeated_names() -> None:
    # 2 x 40,000 (condition, task) cells but 40,000 rows: the cells are compacted; the batch also
    # lists a task name twice (two indices, one task).
    rng = np.random.default_rng(5)
    n = 40_000
    T = rng.integers(1, 5, n)
    fed = np.minimum(rng.integers(1, 6, n), T + 1)
    Y = rng.random(n) < 0.5
    names = [f"task{i:05d}" for i in range(n)] + ["task00000"]
    task = np.arange(n)
    task[-1] = n  # the repeated name
    condition = rng.integers(0, 2, n)
    trial = np.zeros(n, np.int64)
    trial[-1] = 1  # the same task as row 0, another trial
    batch = RolloutArrays(KEYS[:2], condition, names, task, trial, T, fed, Y, np.full(n, -1))
    got = accumulate(batch)
    rollouts = [
        Rollout(KEYS[int(c)], names[int(j)], int(tr), Outcome(int(t), int(f)), bool(y))
        for c, j, tr, t, f, y in zip(condition, task, trial, T, fed, Y, strict=True)
    ]
    assert got == AccumulatorSet.from_rollouts(rollouts)
    cohorts = group_by_condition(rollouts)
    assert all(acc.metrics() == compute_metrics(cohorts[key]) for key, acc in got.items)


@pytest.mark.spec("STREAM-MEMORY", "ACC-MERGE")
@pytest.mark.parametrize("order", ["trial-major", "task-major", "shuffled"])
def test_state_size_does_not_grow_with_more_trials(order: str) -> None:
    # 20 tasks x 3 conditions, 10 or 100 trials each, streamed in batches of 97 rows: the merged
    # state has the same arrays, size for size (one trial range per task).
    def state(trials: int) -> AccumulatorSet:
        rows = [(c, t, tr) for c in range(3) for tr in range(trials) for t in range(20)]
        if order == "task-major":
            rows.sort(key=lambda r: (r[0], r[1], r[2]))
        elif order == "shuffled":
            random.Random(1).shuffle(rows)
        acc = AccumulatorSet.empty()
        for i in range(0, len(rows), 97):
            part = rows[i : i + 97]
            rows_of_batch = [
                (c, t, tr, 1 + t % 4, 1 + (t + tr) % (2 + t % 4), tr % 3 == 0, -1) for c, t, tr in part
            ]
            acc = acc.merge(accumulate(_batch(rows_of_batch, 20)))
        return acc

    def sizes(accs: AccumulatorSet) -> list[tuple[int, ...]]:
        return [
            getattr(a, f).shape
            for _, a in accs.items
            for f in ("fed_hist", "T_hist", "steps_by_T", "class_y", "trials")
        ]

    small, large = state(10), state(100)
    assert small.N * 10 == large.N
    assert sizes(small) == sizes(large)
    assert all(a.trials.shape == (20, 3) for _, a in large.items)


@pytest.mark.spec("ACC-BATCH")
@settings(max_examples=300)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 40)), min_size=1, max_size=60),
    far=st.booleans(),
)
def test_trial_runs_bitmap_equals_the_sorting_path(pairs: list[tuple[int, int]], far: bool) -> None:
    # The flag-array path (small key range) and the lexsort path (forced by a key range beyond
    # 64 bytes a row) must give the same runs, and both must see a repeated (cell, trial).
    from prefixexec.kernel.accumulator import _trial_runs

    cell = np.array([c for c, _ in pairs], dtype=np.int64)
    trial = np.array([t for _, t in pairs], dtype=np.int64)
    small = _trial_runs(cell, trial)
    # Adding a far-away cell with a huge trial number forces the sorting path for the same rows.
    big_cell = np.concatenate([cell, [10_000]])
    big_trial = np.concatenate([trial, [10**9 if far else 10**7]])
    big = _trial_runs(big_cell, big_trial)
    repeated = len(set(pairs)) < len(pairs)
    assert (small is None) == (big is None) == repeated
    if small is not None and big is not None:
        for a, b in zip(small, big, strict=True):
            assert list(a) == list(b[:-1])
        # The runs cover exactly the pairs given.
        covered = {(int(c), t) for c, f, e in zip(*small, strict=True) for t in range(int(f), int(e))}
        assert covered == set(pairs)
