"""Task-level percentile bootstrap, Wilson intervals and paired differences (spec: BOOT-*).

The procedure (section 3.1 of the paper, made reproducible bit for bit):

1. Per dataset, the unique task ids are sorted and one index matrix is drawn,
   ``numpy.random.default_rng(seed).integers(0, n_tasks, size=(B, n_tasks))`` (BOOT-DRAW), and
   turned into counts ``W[b, j]`` = how often task j is drawn in resample b. The same matrix serves
   every condition of the dataset, which makes comparisons paired (BOOT-PAIRED).
2. A drawn task brings all of its rollouts in that condition (BOOT-CLUSTER). Every replicate of
   every metric is a ratio of two weighted integer sums, ``(W @ num) / (W @ den)``, evaluated
   exactly and rounded once to the nearest double (BOOT-REPLICATE). A replicate whose
   denominator is zero is left out of that metric's distribution and counted (BOOT-DROP).
3. The interval is the percentile interval with linear interpolation at ``(1 - level)/2`` and
   ``1 - (1 - level)/2`` (Hyndman-Fan type 7), with exactly the floating-point operations of
   ``scipy.stats.quantile(method='linear')`` as used by
   ``scipy.stats.bootstrap(method='percentile')`` (BOOT-PERCENTILE).
4. RR also gets the Wilson score interval on (recovered, RR-Eligible) (BOOT-WILSON).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from statistics import NormalDist
from typing import Any, TypeVar

import attrs
import numpy as np
import numpy.typing as npt

from .cohort import Cohort

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
K = TypeVar("K")

#: Largest integer below which every float64 sum of integers is exact.
_EXACT_FLOAT_LIMIT = 2**53
#: The same for float32.
_EXACT_FLOAT32_LIMIT = 2**24

#: Mean metrics: replicate = weighted numerator / weighted rollout count.
MEAN_METRICS = ("TER", "AUC_PEC", "mean_FED", "success")


@attrs.frozen(slots=True)
class BootstrapSettings:
    """B resamples, the seed and the confidence level (defaults: the paper's 10,000, 0, 0.95)."""

    B: int = attrs.field(default=10_000)
    seed: int = attrs.field(default=0)
    level: float = attrs.field(default=0.95)

    @B.validator
    def _check_b(self, attribute: attrs.Attribute[int], value: int) -> None:
        if value < 1:
            raise ValueError(f"'B' must be >= 1: {value}")

    @seed.validator
    def _check_seed(self, attribute: attrs.Attribute[int], value: int) -> None:
        if value < 0:
            raise ValueError(f"'seed' must be >= 0: {value}")

    @level.validator
    def _check_level(self, attribute: attrs.Attribute[float], value: float) -> None:
        if not 0 < value < 1:
            raise ValueError(f"'level' must be in (0, 1): {value}")


def resample_counts(n_tasks: int, B: int, seed: int) -> IntArray:
    """BOOT-DRAW: W[b, j] = #{t : idx[b, t] = j} for idx = default_rng(seed).integers(0, n, (B, n))."""
    index = np.random.default_rng(seed).integers(0, n_tasks, size=(B, n_tasks))
    offsets = index + (np.arange(B, dtype=np.int64) * n_tasks)[:, None]
    counts = np.bincount(offsets.reshape(-1), minlength=B * n_tasks).reshape(B, n_tasks)
    return counts.astype(np.int64, copy=False)


@attrs.frozen(slots=True)
class TaskSums:
    """Per-task integer sums of one condition over a task list (rows = tasks, BOOT-CLUSTER).

    ``columns`` names each column of ``X``; AUC-PEC's numerator is scaled by ``L``, the least
    common multiple of the horizons, so that it is an integer.
    """

    X: IntArray
    columns: tuple[str, ...]
    L: int
    K: int


def task_sum_columns(K: int) -> tuple[str, ...]:
    """The columns of :attr:`TaskSums.X`, in order, for horizons up to ``K``."""
    return (
        "count",
        "executable",
        "auc_num",
        "auc_den",
        "fed",
        "success",
        "eligible",
        "recovered",
        *(f"surv{i}" for i in range(1, K + 1)),
        *(f"nk{i}" for i in range(1, K + 1)),
    )


def task_sums(cohort: Cohort, tasks: Sequence[str]) -> TaskSums:
    """Sum every per-rollout quantity of ``cohort`` by task, in the order of ``tasks``."""
    position = {t: j for j, t in enumerate(tasks)}
    row = np.fromiter((position[t] for t in cohort.task), dtype=np.int64, count=cohort.N)
    T, fed, Y = cohort.T, cohort.fed, cohort.Y
    L = math.lcm(*(int(t) for t in np.unique(T)))
    K = int(T.max())
    k = np.arange(1, K + 1, dtype=np.int64)
    # Every per-task sum is at most N x L: int64 while that fits, Python integers beyond (the
    # lcm of horizons 1..43 already exceeds 2^63).
    dtype: type[np.int64] | type[object] = np.int64 if L * cohort.N < 2**62 else object
    scale = np.array([L // int(t) for t in T.tolist()], dtype=dtype)
    per_rollout = np.column_stack(
        [
            np.ones(cohort.N, dtype=np.int64),  # count
            (fed == T + 1).astype(np.int64),  # fully executable
            (fed - 1).astype(dtype) * scale,  # AUC numerator x L
            np.full(cohort.N, L, dtype=dtype),  # AUC denominator: count x L
            fed,  # FED
            Y.astype(np.int64),  # success
            (fed <= T).astype(np.int64),  # RR-eligible
            (Y & (fed <= T)).astype(np.int64),  # recovered
            (fed[:, None] > k[None, :]).astype(np.int64),  # survivors at k
            (T[:, None] >= k[None, :]).astype(np.int64),  # eligible at k
        ]
    )
    X = np.zeros((len(tasks), per_rollout.shape[1]), dtype=per_rollout.dtype)
    np.add.at(X, row, per_rollout)
    return TaskSums(X=X, columns=task_sum_columns(K), L=L, K=K)


def weighted_sums(W: IntArray, X: IntArray) -> npt.NDArray[np.float64] | npt.NDArray[np.object_]:
    """(W @ X) transposed, exactly: row s holds column s of X summed under every resample.

    W's rows sum to the number of tasks drawn, so ``tasks x max |X|`` bounds every partial sum;
    every partial sum is an integer, exact in float32 below 2^24 and in float64 below 2^53,
    whatever the summation order. So the product is taken in float32 (BLAS sgemm, about twice
    as fast) below 2^24, in float64 below 2^53, else in Python integers; the result is float64
    (object for Python integers), laid out as (columns x B) so that each metric's B replicates
    are contiguous.
    """
    bound = int(W.shape[1]) * int(np.abs(X).max(initial=0))
    if bound < _EXACT_FLOAT32_LIMIT:
        single: npt.NDArray[np.float64] = (X.T.astype(np.float32) @ W.T.astype(np.float32)).astype(np.float64)
        return single
    if bound < _EXACT_FLOAT_LIMIT:
        result: npt.NDArray[np.float64] = X.T.astype(np.float64) @ W.T.astype(np.float64)
        return result
    exact: npt.NDArray[np.object_] = X.T.astype(object) @ W.T.astype(object)
    return exact


def _ratio(num: npt.NDArray[Any], den: npt.NDArray[Any]) -> FloatArray:
    """num / den rounded once to the nearest double; NaN where den = 0 (BOOT-REPLICATE, BOOT-DROP)."""
    if num.dtype == np.float64 and den.dtype == np.float64:
        with np.errstate(divide="ignore", invalid="ignore"):
            out: FloatArray = num / den
        out[den == 0] = np.nan
        return out
    flat = [
        (int(a) / int(b)) if int(b) != 0 else math.nan
        for a, b in zip(num.reshape(-1), den.reshape(-1), strict=True)
    ]
    return np.array(flat, dtype=np.float64).reshape(num.shape)


@attrs.frozen(slots=True)
class Replicates:
    """Bootstrap replicates of one condition: metric -> array of B values (NaN = left out).

    ``PEC`` and ``PEC_elig`` are (B x K): column k-1 holds the replicates of depth k.
    """

    scalars: Mapping[str, FloatArray]
    PEC: FloatArray
    PEC_elig: FloatArray


def replicates(W: IntArray, sums: TaskSums) -> Replicates:
    """Every metric's B replicates from the resample counts and the per-task sums."""
    return _replicates_from(weighted_sums(W, sums.X), sums)


def _replicates_from(Z: npt.NDArray[Any], sums: TaskSums) -> Replicates:
    """Replicates from the weighted sums ``Z`` (columns x B, as :func:`weighted_sums` lays out)."""
    col = {name: i for i, name in enumerate(sums.columns)}
    count = Z[col["count"]]
    K = sums.K
    surv = Z[col["surv1"] : col["surv1"] + K]
    nk = Z[col["nk1"] : col["nk1"] + K]
    scalars = {
        "TER": _ratio(Z[col["executable"]], count),
        "AUC_PEC": _ratio(Z[col["auc_num"]], Z[col["auc_den"]]),
        "mean_FED": _ratio(Z[col["fed"]], count),
        "success": _ratio(Z[col["success"]], count),
        "RR": _ratio(Z[col["recovered"]], Z[col["eligible"]]),
    }
    return Replicates(
        scalars=scalars,
        PEC=_ratio(surv, np.broadcast_to(count, surv.shape)).T,
        PEC_elig=_ratio(surv, nk).T,
    )


def _linear_positions(n: int, p: np.float64) -> tuple[int, int, np.float64]:
    """Order-statistic positions and weight of the type-7 quantile, as scipy computes them."""
    nf = np.float64(n)
    jg = p * nf + (np.float64(1) - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    if j < 0:
        g = np.float64(0)
    j = min(max(j, np.float64(0)), nf - 1)
    jp1 = min(max(jp1, np.float64(0)), nf - 1)
    return int(j), int(jp1), g


def _levels(level: float) -> tuple[np.float64, np.float64]:
    alpha = np.float64((1 - level) / 2)
    return alpha, np.float64(1) - alpha


def percentile_interval(values: FloatArray, level: float) -> tuple[float, float] | None:
    """BOOT-PERCENTILE: the linear-interpolation percentile interval of the defined replicates.

    Exactly the arithmetic of ``scipy.stats.quantile(y, [a, 1 - a], method='linear')`` with
    ``a = (1 - level) / 2``: ``jg = p n + (1 - p)``, ``j = floor(jg) - 1``, ``g = jg mod 1``,
    ``(1 - g) y[j] + g y[j + 1]`` over the sorted values. ``None`` if no replicate is defined.
    """
    defined = values[~np.isnan(values)]
    if defined.shape[0] == 0:
        return None
    return percentile_intervals(defined.reshape(-1, 1), level)[0]


def percentile_intervals(R: FloatArray, level: float) -> list[tuple[float, float] | None]:
    """:func:`percentile_interval` of every column of ``R`` (B x C), NaN = left out."""
    return percentile_intervals_rows(np.ascontiguousarray(R.T), level)


def percentile_intervals_rows(
    rows: FloatArray, level: float, nan: npt.NDArray[np.bool_] | None = None, overwrite: bool = False
) -> list[tuple[float, float] | None]:
    """:func:`percentile_interval` of every row of ``rows`` (C x B), NaN = left out.

    The order statistics of the rows without NaN are selected in one call. ``nan`` may pass
    ``numpy.isnan(rows)`` when the caller has it already; ``overwrite``: ``rows`` may be
    reordered in place (saves a copy).
    """
    out: list[tuple[float, float] | None] = [None] * rows.shape[0]
    nan_rows = (np.isnan(rows) if nan is None else nan).any(axis=1)
    lo_p, hi_p = _levels(level)
    if not nan_rows.all():
        n = rows.shape[1]
        j_lo, jp1_lo, g_lo = _linear_positions(n, lo_p)
        j_hi, jp1_hi, g_hi = _linear_positions(n, hi_p)
        full = np.flatnonzero(~nan_rows)
        block = rows if full.shape[0] == rows.shape[0] else rows[full]
        # Only the order statistics at the four positions are needed: selecting them
        # (numpy.partition, introselect) gives the same values as a full row sort, about twice
        # as fast as sorting with numpy 2 on this machine.
        kth = sorted({j_lo, jp1_lo, j_hi, jp1_hi})
        if overwrite or block is not rows:  # block is then a copy already
            block.partition(kth, axis=1)
            ordered = block
        else:
            ordered = np.partition(block, kth, axis=1)
        lows = (1 - g_lo) * ordered[:, j_lo] + g_lo * ordered[:, jp1_lo]
        highs = (1 - g_hi) * ordered[:, j_hi] + g_hi * ordered[:, jp1_hi]
        for i, c in enumerate(full.tolist()):
            out[c] = (float(lows[i]), float(highs[i]))
    for c in np.flatnonzero(nan_rows).tolist():
        y = np.sort(rows[c][~np.isnan(rows[c])])
        if y.shape[0] == 0:
            continue
        bounds = []
        for p in (lo_p, hi_p):
            j, jp1, g = _linear_positions(y.shape[0], p)
            bounds.append(float((1 - g) * y[j] + g * y[jp1]))
        out[c] = (bounds[0], bounds[1])
    return out


def wilson_interval(successes: int, n: int, level: float) -> tuple[float, float] | None:
    """BOOT-WILSON: the Wilson score interval for successes/n; ``None`` when n = 0.

    ``z`` is the standard normal quantile at (1 + level)/2;
    centre = (p + z^2/(2n)) / (1 + z^2/n), half-width = z sqrt(p(1-p)/n + z^2/(4n^2)) / (1 + z^2/n);
    an end that is exactly 0 or 1 in exact arithmetic (0 or n successes) is returned exactly, and
    the ends are clamped to [0, 1].
    """
    if n == 0:
        return None
    z = NormalDist().inv_cdf((1 + level) / 2)
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # With 0 (or n) successes centre and half-width are equal in exact arithmetic, so that end is
    # exactly 0 (or 1); floats leave a residue such as -1.4e-17 ("-0.00" in a table). Set those
    # ends exactly and clamp the others to [0, 1].
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


@attrs.frozen(slots=True)
class Intervals:
    """The intervals of one condition and how many replicates each metric left out."""

    scalars: Mapping[str, tuple[float, float] | None]
    RR_wilson: tuple[float, float] | None
    PEC: tuple[tuple[float, float] | None, ...]
    PEC_elig: tuple[tuple[float, float] | None, ...]
    dropped: Mapping[str, int]
    dropped_PEC_elig: tuple[int, ...]


def intervals(reps: Replicates, recovered: int, eligible: int, level: float) -> Intervals:
    """Percentile intervals of every replicate distribution, plus RR's Wilson interval."""
    names = list(reps.scalars)
    K = reps.PEC.shape[1]
    # One (metrics x B) block; PEC.T and PEC_elig.T are contiguous (K x B) as replicates lays them out.
    rows = np.concatenate([np.stack([reps.scalars[n] for n in names]), reps.PEC.T, reps.PEC_elig.T])
    nan = np.isnan(rows)
    dropped = np.count_nonzero(nan, axis=1)
    found = percentile_intervals_rows(rows, level, nan, overwrite=True)  # rows is ours
    s = len(names)
    return Intervals(
        scalars=dict(zip(names, found[:s], strict=True)),
        RR_wilson=wilson_interval(recovered, eligible, level),
        PEC=tuple(found[s : s + K]),
        PEC_elig=tuple(found[s + K :]),
        dropped={n: int(d) for n, d in zip(names, dropped[:s], strict=True)},
        dropped_PEC_elig=tuple(int(d) for d in dropped[s + K :]),
    )


def missing_tasks(cohorts: Mapping[K, Cohort]) -> dict[K, tuple[str, ...]]:
    """BOOT-PAIRED: for each condition, the dataset's task ids it lacks (empty when paired)."""
    union = sorted({t for c in cohorts.values() for t in c.task})
    present = {key: set(c.task) for key, c in cohorts.items()}
    return {key: tuple(t for t in union if t not in present[key]) for key in cohorts}


def bootstrap_dataset(
    cohorts: Mapping[K, Cohort], settings: BootstrapSettings, paired: bool = True
) -> dict[K, Replicates]:
    """Replicates for every condition of one dataset.

    Paired (default): one matrix over the sorted union of task ids, shared by all conditions;
    the caller must have checked :func:`missing_tasks`. Unpaired: each condition draws its own
    matrix over its own sorted task ids, from the same seed.
    """
    return bootstrap_task_sums(
        {key: c.task for key, c in cohorts.items()},
        lambda key, tasks: task_sums(cohorts[key], tasks),
        settings,
        paired,
    )


def bootstrap_task_sums(
    task_ids: Mapping[K, Iterable[str]],
    sums_of: Callable[[K, Sequence[str]], TaskSums],
    settings: BootstrapSettings,
    paired: bool = True,
) -> dict[K, Replicates]:
    """:func:`bootstrap_dataset` for conditions given by their task ids and a per-task-sums function.

    ``sums_of(key, tasks)`` gives condition ``key``'s :class:`TaskSums` over the task list ``tasks``
    (from a cohort, :func:`task_sums`; from an accumulator, ``Accumulator.task_sums``).
    """
    if paired:
        tasks = sorted({t for ids in task_ids.values() for t in ids})
        W = resample_counts(len(tasks), settings.B, settings.seed)
        all_sums = {key: sums_of(key, tasks) for key in task_ids}
        # One product for the whole dataset: the conditions' columns side by side.
        Z = weighted_sums(W, np.concatenate([s.X for s in all_sums.values()], axis=1))  # (columns x B)
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


def difference_interval(
    treatment: FloatArray, baseline: FloatArray, level: float
) -> tuple[tuple[float, float] | None, int]:
    """BOOT-COMPARE: percentile interval of the paired replicate differences, and the drop count."""
    diff = treatment - baseline
    return percentile_interval(diff, level), int(np.count_nonzero(np.isnan(diff)))


def exact_difference(a: Fraction | None, b: Fraction | None) -> Fraction | None:
    """The exact difference of two point estimates (``None`` if either is undefined)."""
    return None if a is None or b is None else a - b
