"""The blocked bootstrap (#27) against the whole-matrix bootstrap it replaced, bit for bit.

``whole_matrix_bootstrap`` below is the kernel's ``bootstrap_task_sums`` as it was before the
blocked bootstrap (commit c6ef948): one ``resample_counts`` matrix of B x tasks, one product,
replicates of every condition. It is kept here, unchanged, as the reference: the blocked
intervals must equal its intervals for every seed, block size and group size (the draws come
from the same generator stream in the same order, BOOT-BLOCK).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from prefixexec.kernel import Cohort, Outcome
from prefixexec.kernel.bootstrap import (
    BootstrapMemoryError,
    BootstrapSettings,
    Replicates,
    TaskSums,
    _replicates_from,
    bootstrap_intervals,
    bootstrap_task_sums,
    default_block,
    designs,
    intervals,
    plan,
    positioned_generator,
    rejections,
    replicates,
    resample_blocks,
    resample_counts,
    task_sums,
    weighted_sums,
)

from strategies import cohort_of, triples

K = TypeVar("K")


def whole_matrix_bootstrap(
    task_ids: Mapping[K, Iterable[str]],
    sums_of: Callable[[K, Sequence[str]], TaskSums],
    settings: BootstrapSettings,
    paired: bool = True,
) -> dict[K, Replicates]:
    """The pre-#27 ``bootstrap_task_sums`` (commit c6ef948), verbatim but for its name."""
    if paired:
        tasks = sorted({t for ids in task_ids.values() for t in ids})
        W = resample_counts(len(tasks), settings.B, settings.seed)
        all_sums = {key: sums_of(key, tasks) for key in task_ids}
        Z = weighted_sums(W, np.concatenate([s.X for s in all_sums.values()], axis=1))
        out_paired: dict[K, Replicates] = {}
        start = 0
        for key, sums in all_sums.items():
            width = sums.X.shape[1]
            out_paired[key] = _replicates_from(Z[start : start + width], sums)
            start += width
        return out_paired
    out: dict[K, Replicates] = {}
    for key, ids in task_ids.items():
        own = sorted(set(ids))
        out[key] = replicates(resample_counts(len(own), settings.B, settings.seed), sums_of(key, own))
    return out


def conditions_of(draw: st.DrawFn, n_conditions: int, paired: bool) -> dict[str, Cohort]:
    """Up to n_conditions cohorts over tasks task0..task5 (several trials per task)."""
    out: dict[str, Cohort] = {}
    shared = draw(st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True))
    for c in range(n_conditions):
        tasks = shared if paired else draw(st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True))
        names = [f"task{t}" for t in tasks for _ in range(draw(st.integers(1, 3)))]
        items = draw(st.lists(triples(max_t=7), min_size=len(names), max_size=len(names)))
        out[f"c{c}"] = cohort_of(items, names)
    return out


@st.composite
def datasets(draw: st.DrawFn) -> tuple[dict[str, Cohort], bool]:
    paired = draw(st.booleans())
    return conditions_of(draw, draw(st.integers(1, 4)), paired), paired


def reference_intervals(cohorts: Mapping[str, Cohort], s: BootstrapSettings, paired: bool) -> dict[str, Any]:
    reps = whole_matrix_bootstrap(
        {k: c.task for k, c in cohorts.items()}, lambda k, t: task_sums(cohorts[k], t), s, paired
    )
    out = {}
    for key, c in cohorts.items():
        eligible = int(np.count_nonzero(c.fed <= c.T))
        recovered = int(np.count_nonzero(c.Y & (c.fed <= c.T)))
        out[key] = intervals(reps[key], recovered, eligible, s.level)
    return out


def blocked(
    cohorts: Mapping[str, Cohort], s: BootstrapSettings, paired: bool, **options: Any
) -> dict[str, Any]:
    return bootstrap_intervals(
        {k: c.task for k, c in cohorts.items()}, lambda k, t: task_sums(cohorts[k], t), s, paired, **options
    )


def same(a: Any, b: Any) -> bool:
    """Intervals equal bit for bit (floats compared by their bits through ==; no NaN in intervals)."""
    return bool(a == b) and repr(a) == repr(b)


@pytest.mark.spec("BOOT-BLOCK", "BOOT-DEDUP", "BOOT-PAIRED", "BOOT-CLUSTER")
@settings(max_examples=60, deadline=None)
@given(
    datasets(),
    st.integers(0, 2**32 - 1),
    st.integers(1, 80),
    st.integers(1, 90),
    st.sampled_from([0.5, 0.9, 0.95]),
    st.integers(1, 12),
)
def test_blocked_intervals_equal_the_whole_matrix(
    data: tuple[dict[str, Cohort], bool], seed: int, B: int, block: int, level: float, group_rows: int
) -> None:
    cohorts, paired = data
    s = BootstrapSettings(B=B, seed=seed, level=level)
    expected = reference_intervals(cohorts, s, paired)
    # Groups of a few rows (each group draws the stream again) and any block size.
    got = blocked(cohorts, s, paired, block=block, group_bytes=group_rows * 17 * B)
    assert got.keys() == expected.keys()
    for key in expected:
        assert same(got[key], expected[key]), key
    # The kept replicates (bootstrap_task_sums, now drawn in blocks) are the whole matrix's too.
    reps = bootstrap_task_sums(
        {k: c.task for k, c in cohorts.items()}, lambda k, t: task_sums(cohorts[k], t), s, paired, block
    )
    ref = whole_matrix_bootstrap(
        {k: c.task for k, c in cohorts.items()}, lambda k, t: task_sums(cohorts[k], t), s, paired
    )
    for key in ref:
        for name in ref[key].scalars:
            assert np.array_equal(reps[key].scalars[name], ref[key].scalars[name], equal_nan=True)
        assert np.array_equal(reps[key].PEC, ref[key].PEC, equal_nan=True)
        assert np.array_equal(reps[key].PEC_elig, ref[key].PEC_elig, equal_nan=True)


@pytest.mark.spec("BOOT-BLOCK", "BOOT-DRAW")
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(1, 60), st.integers(0, 2**32 - 1), st.integers(1, 70))
def test_blocks_are_the_rows_of_the_whole_matrix(n: int, B: int, seed: int, block: int) -> None:
    whole = resample_counts(n, B, seed)
    assert np.array_equal(np.concatenate(list(resample_blocks(n, B, seed, block))), whole)


@pytest.mark.spec("BOOT-STREAM")
@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([1, 2, 3, 10, 1000, 1000003, 2**31 + 1, 3 * 2**30, 2**32 - 1, 2**32]),
    st.integers(0, 2**32 - 1),
    st.integers(0, 3000),
)
def test_a_positioned_generator_continues_the_stream(n: int, seed: int, value: int) -> None:
    # n = 2^31 + 1 rejects about half of the 32-bit outputs (2^32 mod n = 2^31 - 1), so the skip
    # over rejected outputs is exercised; n = 1 draws nothing, n = 2^32 takes every output.
    full = np.random.default_rng(seed).integers(0, n, size=value + 50)
    rng = positioned_generator(n, seed, value, rejections(n, seed, 0, value))
    assert np.array_equal(rng.integers(0, n, size=50), full[value:])
    # Counts of adjacent ranges add up (the Dask engine sums the counts of the earlier blocks).
    cut = value // 3
    assert rejections(n, seed, 0, cut) + rejections(n, seed, cut, value) == rejections(n, seed, 0, value)


@pytest.mark.spec("BOOT-STREAM")
def test_rejections_counts_what_numpy_rejects() -> None:
    # Reference: the count of outputs numpy consumed beyond the values it returned, read from the
    # bit generator's position: 2 x (64-bit draws) - has_uint32 is the number of 32-bit outputs used.
    n, seed, m = 2**31 + 1, 11, 10_001
    rng = np.random.default_rng(seed)
    rng.integers(0, n, size=m)
    state = rng.bit_generator.state
    probe = np.random.PCG64(seed)
    draws = 0
    while probe.state["state"] != state["state"]:
        probe.random_raw()
        draws += 1
    used = 2 * draws - state["has_uint32"]
    assert rejections(n, seed, 0, used) == used - m


@pytest.mark.spec("BOOT-DEDUP")
def test_equal_columns_are_computed_once() -> None:
    # One rollout with T = 100000: 200,008 per-task columns, of which 4 distinct (0, 1, L, FED),
    # and 5 distinct ratios (TER = PEC(k > FED-1) = 0/1, PEC(k < FED) = 1/1, AUC, FED/1, ...):
    # the design holds only those, and the intervals are the same as computing every column.
    c = cohort_of([(Outcome(100_000, 5, None), False)])
    (d,) = designs({"c": c.task}, lambda k, t: task_sums(c, t))
    assert len(d.columns) <= 6 and d.R <= 8
    s = BootstrapSettings(B=200, seed=1)
    got = blocked({"c": c}, s, True)["c"]
    assert len(got.PEC) == 100_000 and got.PEC[3] == (1.0, 1.0) and got.PEC[4] == (0.0, 0.0)
    assert got.scalars["mean_FED"] == (5.0, 5.0) and got.scalars["AUC_PEC"] == (4 / 100_000, 4 / 100_000)
    # Two tasks with T = 3000: the whole matrix is small enough to compare every interval with.
    two = cohort_of([(Outcome(3000, 5, None), False), (Outcome(3000, 2000, None), True)])
    expected = reference_intervals({"c": two}, s, True)["c"]
    assert same(blocked({"c": two}, s, True)["c"], expected)
    (d2,) = designs({"c": two.task}, lambda k, t: task_sums(two, t))
    assert len(d2.columns) <= 12 and d2.R <= 12


@pytest.mark.spec("BOOT-PERCENTILE", "BOOT-BLOCK")
@pytest.mark.parametrize(("seed", "block"), [(0, 1), (7, 333), (123, 2000)])
def test_blocked_intervals_equal_scipy_bootstrap(seed: int, block: int) -> None:
    # scipy.stats.bootstrap (percentile, rng=seed) draws the same index matrix in one piece.
    rng = np.random.default_rng(seed)
    n = 150
    T = rng.integers(1, 9, n)
    fed = np.array([rng.integers(1, t + 2) for t in T])
    c = Cohort(
        T=T,
        fed=fed,
        Y=rng.random(n) < 0.5,
        label_code=np.where(fed == T + 1, -1, 5),
        task=[f"t{i:04d}" for i in range(n)],
    )
    B = 2000
    got = blocked({"c": c}, BootstrapSettings(B=B, seed=seed), True, block=block)["c"].scalars
    for name, values in (("TER", (fed == T + 1)), ("mean_FED", fed), ("success", c.Y)):
        res = stats.bootstrap(
            (values.astype(np.float64),),
            np.mean,
            n_resamples=B,
            method="percentile",
            rng=seed,
            vectorized=True,
        )
        assert got[name] == (float(res.confidence_interval.low), float(res.confidence_interval.high))


@pytest.mark.spec("BOOT-BLOCK")
def test_default_block_stays_under_256_mib() -> None:
    for n in (1, 10**3, 10**5, 10**6, 10**8):
        b = default_block(n, 10_000)
        assert 1 <= b <= 10_000
        assert b == 1 or b * n * 16 <= 256 * 2**20
    assert default_block(10**6, 10_000) == 16  # 256 MiB / (16 bytes x 10^6 tasks)


@pytest.mark.spec("BOOT-MEMORY")
def test_a_request_that_cannot_fit_is_refused_before_drawing() -> None:
    c = cohort_of([(Outcome(3, 2, None), True)] * 1, [f"t{i}" for i in range(1)])
    many = cohort_of([(Outcome(3, 2, None), True)] * 2000, [f"t{i}" for i in range(2000)])
    (d,) = designs({"c": many.task}, lambda k, t: task_sums(many, t))
    # A forced block too large: refused, with the largest block that fits.
    with pytest.raises(BootstrapMemoryError) as info:
        plan(d, 10_000, block=10_000, memory_limit=50 * 2**20)
    assert "a block of 10000 resamples x 2000 tasks" in str(info.value)
    assert 1 <= info.value.block_max < 10_000
    ok = plan(d, 10_000, block=info.value.block_max, memory_limit=50 * 2**20)
    assert ok.peak_bytes <= 50 * 2**20
    # Without a forced block the block shrinks to fit; too many resamples for one interval are refused.
    assert plan(d, 10_000, memory_limit=50 * 2**20).peak_bytes <= 50 * 2**20
    (one,) = designs({"c": c.task}, lambda k, t: task_sums(c, t))
    with pytest.raises(BootstrapMemoryError) as info:
        plan(one, 10**9, memory_limit=2**30)
    assert "1000000000 resamples" in str(info.value) and 0 < info.value.B_max < 10**9
    assert plan(one, info.value.B_max, memory_limit=2**30).peak_bytes <= 2**30
    calls: list[int] = []
    with pytest.raises(BootstrapMemoryError):
        bootstrap_intervals(
            {"c": c.task},
            lambda k, t: task_sums(c, t),
            BootstrapSettings(B=10**9),
            memory_limit=2**30,
            progress=lambda done, total: calls.append(done),
        )
    assert calls == []  # nothing was drawn


@pytest.mark.spec("BOOT-BLOCK")
def test_progress_counts_every_block() -> None:
    c = cohort_of(
        [(Outcome(3, 2, None), True), (Outcome(2, 3, None), False)] * 5, [f"t{i}" for i in range(10)]
    )
    seen: list[tuple[int, int]] = []
    bootstrap_intervals(
        {"c": c.task},
        lambda k, t: task_sums(c, t),
        BootstrapSettings(B=100),
        block=30,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]  # ceil(100 / 30) blocks, one group
    assert math.ceil(100 / 30) == 4


@pytest.mark.spec("BOOT-REPLICATE")
@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([1, 3, 200, 4096, 70_000]),
    st.lists(st.sampled_from([1, 2**4, 2**20, 2**24, 2**40, 2**62, 2**70]), min_size=1, max_size=4),
    st.integers(0, 2**16),
)
def test_prepared_sums_are_exact_with_any_limbs(n: int, tops: list[int], seed: int) -> None:
    # Columns up to each top (Python integers past int64), counts of 3 resamples: the prepared
    # product (float32 or float64 limbs, recombined) equals the exact integer product.
    from prefixexec.kernel.bootstrap import block_counts, prepare

    rng = np.random.default_rng(seed)
    columns = []
    for top in tops:
        values = [int(v) for v in rng.integers(0, min(top, 2**62), n)]
        values[0] = top
        columns.append(np.array(values, dtype=object) if top >= 2**63 else np.array(values, dtype=np.int64))
    prepared = prepare(columns, n)
    W = block_counts(rng.integers(0, n, size=(3, n)), n, prepared.dtype)
    got = prepared.sums(W)
    exact = np.column_stack([c.astype(object) for c in columns]).T @ W.astype(np.int64).astype(object).T
    assert [[int(v) for v in row] for row in got] == [[int(v) for v in row] for row in exact]
    if n * max(tops) < 2**53:
        assert got.dtype == np.float64
