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

Blocked (BOOT-BLOCK, BOOT-STREAM): :func:`bootstrap_intervals` never holds the B x tasks matrix.
It draws the rows of the same index matrix ``block`` rows at a time from the one generator
(``integers`` called once per block: the same stream in the same order, so the same numbers),
reduces each block to the weighted sums it needs, and keeps only the replicates of a group of
intervals at a time; equal (numerator, denominator) columns are computed once (BOOT-DEDUP).
The intervals are therefore bit for bit those of the whole matrix. :func:`rejections` and
:func:`positioned_generator` let a worker start at any row of the stream without drawing the
rows before it (the Dask engine, DASK-BOOTSTRAP).
"""

from __future__ import annotations

import hashlib
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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
    cohorts: Mapping[K, Cohort], settings: BootstrapSettings, paired: bool = True, block: int | None = None
) -> dict[K, Replicates]:
    """Replicates for every condition of one dataset.

    Paired (default): one matrix over the sorted union of task ids, shared by all conditions;
    the caller must have checked :func:`missing_tasks`. Unpaired: each condition draws its own
    matrix over its own sorted task ids, from the same seed. The matrix is drawn in blocks
    (BOOT-BLOCK) but every replicate is kept: B x (5 + 2K) doubles per condition. For intervals
    alone, :func:`bootstrap_intervals` keeps only a group of them at a time.
    """
    return bootstrap_task_sums(
        {key: c.task for key, c in cohorts.items()},
        lambda key, tasks: task_sums(cohorts[key], tasks),
        settings,
        paired,
        block,
    )


def bootstrap_task_sums(
    task_ids: Mapping[K, Iterable[str]],
    sums_of: Callable[[K, Sequence[str]], TaskSums],
    settings: BootstrapSettings,
    paired: bool = True,
    block: int | None = None,
) -> dict[K, Replicates]:
    """:func:`bootstrap_dataset` for conditions given by their task ids and a per-task-sums function.

    ``sums_of(key, tasks)`` gives condition ``key``'s :class:`TaskSums` over the task list ``tasks``
    (from a cohort, :func:`task_sums`; from an accumulator, ``Accumulator.task_sums``). The
    replicates are those of the whole matrix (:func:`resample_counts`), drawn ``block`` resamples
    at a time (default :func:`default_block`).
    """
    out: dict[K, Replicates] = {}
    for design in designs(task_ids, sums_of, paired):
        work = design.work(0, design.R)
        rows = work.replicates(
            np.random.default_rng(settings.seed), settings.B, _block(design.n_tasks, settings.B, block)
        )
        rows.flags.writeable = False
        for key, where in design.conditions.items():
            out[key] = Replicates(
                scalars={name: rows[i] for name, i in where.scalars.items()},
                PEC=rows[where.PEC].T,
                PEC_elig=rows[where.PEC_elig].T,
            )
    return {key: out[key] for key in task_ids}


def difference_interval(
    treatment: FloatArray, baseline: FloatArray, level: float
) -> tuple[tuple[float, float] | None, int]:
    """BOOT-COMPARE: percentile interval of the paired replicate differences, and the drop count."""
    diff = treatment - baseline
    return percentile_interval(diff, level), int(np.count_nonzero(np.isnan(diff)))


def exact_difference(a: Fraction | None, b: Fraction | None) -> Fraction | None:
    """The exact difference of two point estimates (``None`` if either is undefined)."""
    return None if a is None or b is None else a - b


# ---------------------------------------------------------------------------------------------
# The blocked bootstrap (BOOT-BLOCK, BOOT-DEDUP, BOOT-MEMORY)

#: Default memory of one resample block, about 256 MiB (BOOT-BLOCK).
BLOCK_BYTES = 256 * 2**20
#: Bytes per (resample, task) cell of a block: the drawn index (int64) and its count (float64 at most).
CELL_BYTES = 16
#: Default memory of the replicates kept at once: one group of intervals (BOOT-BLOCK).
GROUP_BYTES = 256 * 2**20
#: Bytes per kept replicate: the double, a copy for the order statistics and its NaN flag.
REPLICATE_BYTES = 17

#: ``progress(done, total)``: called after each block with the blocks done and the blocks in all.
ProgressFn = Callable[[int, int], None]


class BootstrapMemoryError(ValueError):
    """A request the bootstrap cannot finish in the memory it may use (BOOT-MEMORY), raised
    before any resample is drawn. ``block_max`` is the largest block that would fit (0 if none),
    ``B_max`` the most resamples that would fit with the smallest block."""

    def __init__(self, what: str, needed: int, limit: int, block_max: int, B_max: int) -> None:
        super().__init__(what)
        self.what = what
        self.needed = needed
        self.limit = limit
        self.block_max = block_max
        self.B_max = B_max


def default_block(n_tasks: int, B: int, budget: int = BLOCK_BYTES) -> int:
    """BOOT-BLOCK: resamples per block so that a block's cells take at most ``budget`` bytes
    (``CELL_BYTES`` per resample and task), at least 1 and at most B."""
    return max(1, min(B, budget // (CELL_BYTES * max(1, n_tasks))))


def _block(n_tasks: int, B: int, block: int | None) -> int:
    if block is None:
        return default_block(n_tasks, B)
    if block < 1:
        raise ValueError(f"'block' must be >= 1: {block}")
    return min(block, B)


def block_counts(index: IntArray, n_tasks: int, dtype: npt.DTypeLike = np.int64) -> npt.NDArray[Any]:
    """W for one block of index rows: ``W[b, j] = #{t : index[b, t] = j}``, in ``dtype``.

    Counted row by row (one ``bincount`` of n_tasks), or for few tasks several rows at once
    through offsets, about a million cells at a time: no temporary larger than that.
    """
    rows = int(index.shape[0])
    out = np.empty((rows, n_tasks), dtype=dtype)
    if n_tasks >= 4096:
        for r in range(rows):
            out[r] = np.bincount(index[r], minlength=n_tasks)
        return out
    step = max(1, (1 << 20) // max(1, n_tasks))
    for start in range(0, rows, step):
        part = index[start : start + step]
        m = int(part.shape[0])
        offsets = part + (np.arange(m, dtype=np.int64) * n_tasks)[:, None]
        out[start : start + m] = np.bincount(offsets.reshape(-1), minlength=m * n_tasks).reshape(m, n_tasks)
    return out


def resample_blocks(n_tasks: int, B: int, seed: int, block: int) -> Iterator[IntArray]:
    """BOOT-BLOCK: the rows of ``resample_counts(n_tasks, B, seed)``, ``block`` rows at a time.

    One generator, ``integers(0, n_tasks, size=(rows, n_tasks))`` once per block: the same stream
    in the same order as the whole matrix, so the same rows.
    """
    rng = np.random.default_rng(seed)
    for start in range(0, B, block):
        rows = min(block, B - start)
        yield block_counts(rng.integers(0, n_tasks, size=(rows, n_tasks)), n_tasks)


# -- Starting anywhere in the stream (BOOT-STREAM) ------------------------------------------------

_U32 = 1 << 32


def _check_stream(n_tasks: int) -> None:
    if not 1 <= n_tasks <= _U32:
        raise ValueError(f"starting the stream at a row needs 1 <= tasks <= 2^32: {n_tasks}")


def _raw32(bitgen: np.random.PCG64, count: int) -> npt.NDArray[np.uint32]:
    """The next ``count`` (even) 32-bit outputs of ``bitgen``: the low half of each 64-bit draw,
    then its high half (PCG64's ``next_uint32``)."""
    raw = bitgen.random_raw(count // 2)
    assert isinstance(raw, np.ndarray)
    if sys.byteorder == "little":  # the two halves in memory order already
        halves: npt.NDArray[np.uint32] = raw.view(np.uint32)
        return halves
    out = np.empty(2 * raw.shape[0], dtype=np.uint32)
    out[0::2] = raw & np.uint64(0xFFFFFFFF)
    out[1::2] = raw >> np.uint64(32)
    return out


def _accepted(u: npt.NDArray[np.uint32], n_tasks: int) -> npt.NDArray[np.bool_]:
    """Which 32-bit outputs numpy's bounded ``integers(0, n_tasks)`` keeps (Lemire's method): those
    whose low product half ``(u n) mod 2^32`` (a wrapping uint32 product) is at least
    ``2^32 mod n``; each kept output is the value ``(u n) >> 32``. A rejected output is skipped
    whatever came before it."""
    low = u * np.uint32(n_tasks % _U32)  # n_tasks = 2^32 has nothing to reject and never gets here
    keep: npt.NDArray[np.bool_] = low >= np.uint32(_U32 % n_tasks)
    return keep


def _at(seed: int, position: int) -> np.random.PCG64:
    """The seed's PCG64 positioned before 32-bit output number ``position`` (even or odd)."""
    bitgen = np.random.PCG64(seed)  # default_rng(seed)'s bit generator
    bitgen.advance(position // 2)
    if position % 2:
        high = int(bitgen.random_raw()) >> 32
        state = bitgen.state
        state["has_uint32"], state["uinteger"] = 1, high
        bitgen.state = state
    return bitgen


def rejections(n_tasks: int, seed: int, start: int, stop: int, chunk: int = 1 << 22) -> int:
    """BOOT-STREAM: how many of the 32-bit outputs at positions ``[start, stop)`` of the seed's
    stream numpy's ``integers(0, n_tasks)`` rejects (a few in a million at most for n_tasks up to a
    million; none when n_tasks is 1 or a power of two). Resample rows ``[r0, r1)`` start at
    position ``r0 n_tasks``: ``rejections(n, seed, r0 * n, r1 * n)``."""
    _check_stream(n_tasks)
    if n_tasks == 1 or _U32 % n_tasks == 0 or stop <= start:
        return 0
    position = start - start % 2
    bitgen = _at(seed, position)
    found = 0
    while position < stop:
        take = min(chunk, stop - position)
        take += take % 2
        u = _raw32(bitgen, take)[max(start - position, 0) : stop - position]
        found += int(u.shape[0] - np.count_nonzero(_accepted(u, n_tasks)))
        position += take
    return found


def positioned_generator(n_tasks: int, seed: int, value: int, rejected: int) -> np.random.Generator:
    """BOOT-STREAM: a generator whose ``integers(0, n_tasks, ...)`` continues ``default_rng(seed)``'s
    values from value number ``value`` on (resample row r starts at value ``r n_tasks``),
    without drawing the values before it.

    ``rejected`` must be ``rejections(n_tasks, seed, 0, value)`` (a sum of the counts of the
    earlier ranges): the outputs before position ``value`` hold ``value - rejected`` kept
    values, so value number ``value`` is the ``rejected + 1``-th kept output from there on.
    """
    _check_stream(n_tasks)
    if n_tasks == 1 or rejected == 0:  # integers(0, 1) draws nothing
        return np.random.Generator(_at(seed, value))
    scan = value - value % 2
    bitgen = _at(seed, scan)
    position, left = value, rejected
    while True:
        take = max(2, 2 * left)
        u = _raw32(bitgen, take)[position - scan :]
        kept = np.cumsum(_accepted(u, n_tasks))
        if kept.shape[0] and int(kept[-1]) >= left:
            after = position + int(np.searchsorted(kept, left)) + 1
            return np.random.Generator(_at(seed, after))
        left -= int(kept[-1]) if kept.shape[0] else 0
        scan += take
        position = scan


# -- Exact weighted sums of a block ----------------------------------------------------------


@attrs.frozen(slots=True, eq=False)
class Prepared:
    """Integer columns (n_tasks x width) made ready for exact products with a block of counts.

    Each column is split into limbs of ``shift`` bits (one limb when it fits), the limbs laid
    side by side in ``F`` (``dtype``: float32 when every limb's sum is below 2^24, so that the
    product is one sgemm with counts in float32, else float64 below 2^53); column c is
    ``sum_l F-column limb[c][l] x 2^(shift l)``. ``exact_float``: every column's sum is below 2^53,
    so the recombined sums are float64 (else Python integers). Every sum is exact
    (BOOT-REPLICATE).
    """

    F: npt.NDArray[Any]
    width: int
    shift: int
    limb_column: IntArray  # for each F column, the column it is a limb of
    limb_power: IntArray  # and its limb number l
    exact_float: bool

    @property
    def dtype(self) -> type[np.floating[Any]]:
        return np.float32 if self.F.dtype == np.float32 else np.float64

    def sums(self, W: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """(W @ columns) transposed, exactly: (width x rows), float64 or Python integers."""
        product = (W @ self.F).T
        if self.F.shape[1] == self.width:  # one limb a column, in column order
            exact: npt.NDArray[np.float64] = product.astype(np.float64, copy=False)
            return exact
        if self.exact_float:
            total = np.zeros((self.width, W.shape[0]), dtype=np.float64)
            for j in range(self.F.shape[1]):  # every partial sum is an integer below 2^53
                total[self.limb_column[j]] += product[j].astype(np.float64) * float(
                    2 ** (self.shift * int(self.limb_power[j]))
                )
            return total
        whole = np.zeros((self.width, W.shape[0]), dtype=object)
        for j in range(self.F.shape[1]):
            part = product[j].astype(np.int64).astype(object) * (1 << (self.shift * int(self.limb_power[j])))
            whole[self.limb_column[j]] += part
        return whole


def _limb_bits(n_tasks: int, limit: int) -> int:
    """The most bits ``k`` a limb may have so that n_tasks x (2^k - 1) < limit (0 if none)."""
    return (((limit - 1) // max(1, n_tasks)) + 1).bit_length() - 1


def prepare(columns: Sequence[npt.NDArray[Any]], n_tasks: int) -> Prepared:
    """:class:`Prepared` of non-negative integer columns (int64 or Python integers) of n_tasks rows.

    float32 limbs when a limb of at least 4 bits keeps every sum below 2^24 (the counts of a
    block are then float32: half the memory and about twice the speed of float64), else float64
    limbs below 2^53.
    """
    tops = [int(c.max()) if c.shape[0] else 0 for c in columns]
    exact_float = n_tasks * max(tops, default=0) < _EXACT_FLOAT_LIMIT
    bits32 = _limb_bits(n_tasks, _EXACT_FLOAT32_LIMIT)
    dtype: type[np.floating[Any]] = np.float32
    if bits32 >= 4 and exact_float:
        shift = bits32
    else:
        shift, dtype = _limb_bits(n_tasks, _EXACT_FLOAT_LIMIT), np.float64
        if shift < 1:
            raise ValueError(f"too many tasks for exact sums: {n_tasks}")
    counts = [max(1, -(-top.bit_length() // shift)) for top in tops]
    F = np.empty((n_tasks, sum(counts)), dtype=dtype)
    limb_column, limb_power = [], []
    mask = (1 << shift) - 1
    j = 0
    for c, (values, limbs) in enumerate(zip(columns, counts, strict=True)):
        if limbs == 1:
            F[:, j] = values
        elif values.dtype != object:
            for limb in range(limbs):
                F[:, j + limb] = (values >> (shift * limb)) & mask
        else:
            as_list = values.tolist()
            for limb in range(limbs):
                F[:, j + limb] = [(v >> (shift * limb)) & mask for v in as_list]
        limb_column += [c] * limbs
        limb_power += list(range(limbs))
        j += limbs
    return Prepared(
        F,
        len(columns),
        shift,
        np.array(limb_column, dtype=np.int64),
        np.array(limb_power, dtype=np.int64),
        exact_float,
    )


# -- Designs: one draw and its distinct ratio rows (BOOT-DEDUP) --------------------------------


@attrs.frozen(slots=True, eq=False)
class ConditionRows:
    """Where one condition's replicates are among its design's ratio rows, and RR's counts."""

    scalars: Mapping[str, int]
    PEC: IntArray
    PEC_elig: IntArray
    recovered: int
    eligible: int


@attrs.frozen(slots=True, eq=False)
class GroupWork:
    """What a group of ratio rows needs from every block: the prepared columns and, per row,
    the indices of its numerator and denominator columns. Picklable (sent to Dask workers)."""

    n_tasks: int
    prepared: Prepared
    num: IntArray
    den: IntArray

    @property
    def rows(self) -> int:
        return int(self.num.shape[0])

    def block(self, W: npt.NDArray[Any]) -> FloatArray:
        """The group's replicates (rows x W's rows) under a block of counts."""
        Z = self.prepared.sums(W)
        return _ratio(Z[self.num], Z[self.den])

    def replicates(
        self, rng: np.random.Generator, count: int, block: int, tick: Callable[[], None] | None = None
    ) -> FloatArray:
        """The group's replicates of the next ``count`` resamples of ``rng``, ``block`` at a time."""
        out = np.empty((self.rows, count), dtype=np.float64)
        done = 0
        while done < count:
            rows = min(block, count - done)
            index = rng.integers(0, self.n_tasks, size=(rows, self.n_tasks))
            W = block_counts(index, self.n_tasks, self.prepared.dtype)
            del index
            out[:, done : done + rows] = self.block(W)
            del W
            done += rows
            if tick is not None:
                tick()
        return out


@attrs.frozen(slots=True, eq=False)
class Design:
    """One resample draw over ``n_tasks`` sorted tasks (BOOT-DRAW) and the distinct ratio rows
    its conditions need (BOOT-DEDUP): row r is ``columns[num[r]] / columns[den[r]]`` under each
    resample; ``conditions`` says which rows are each condition's."""

    n_tasks: int
    columns: tuple[npt.NDArray[Any], ...]
    num: IntArray
    den: IntArray
    conditions: Mapping[Any, ConditionRows]

    @property
    def R(self) -> int:
        return int(self.num.shape[0])

    def work(self, start: int, stop: int) -> GroupWork:
        """The :class:`GroupWork` of rows ``start:stop``."""
        num, den = self.num[start:stop], self.den[start:stop]
        needed = np.unique(np.concatenate([num, den]))
        prepared = prepare([self.columns[int(c)] for c in needed], self.n_tasks)
        return GroupWork(self.n_tasks, prepared, np.searchsorted(needed, num), np.searchsorted(needed, den))

    def column_bytes(self) -> int:
        return sum(int(c.nbytes) if c.dtype != object else 8 * int(c.shape[0]) for c in self.columns)


def _int64_column(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """An object column as int64 when every value fits (it then dedupes and prepares as int64)."""
    if values.dtype != object:
        return values
    try:
        return np.array(values.tolist(), dtype=np.int64)
    except OverflowError:
        return values


class _DesignBuilder:
    """Collects distinct columns (by content) and distinct (numerator, denominator) rows."""

    def __init__(self, n_tasks: int) -> None:
        self.n_tasks = n_tasks
        self.columns: list[npt.NDArray[Any]] = []
        self.by_digest: dict[bytes, list[int]] = {}
        self.rows: dict[tuple[int, int], int] = {}
        self.conditions: dict[Any, ConditionRows] = {}

    def column(self, values: npt.NDArray[Any]) -> int:
        values = _int64_column(values)
        raw = values.tobytes() if values.dtype != object else repr(values.tolist()).encode()
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        same = self.by_digest.setdefault(digest, [])
        for c in same:  # equal content, not only equal digests
            if self.columns[c].dtype == values.dtype and np.array_equal(self.columns[c], values):
                return c
        same.append(len(self.columns))
        values.flags.writeable = False
        self.columns.append(values)
        return len(self.columns) - 1

    def distinct_columns(self, X: npt.NDArray[Any]) -> IntArray:
        """The design's column id of every column of X (n_tasks x C)."""
        XT = np.ascontiguousarray(X.T)
        if XT.dtype == object or XT.shape[0] == 0:
            return np.array([self.column(XT[i]) for i in range(XT.shape[0])], dtype=np.int64)
        unique, inverse = np.unique(XT, axis=0, return_inverse=True)
        ids = np.array([self.column(np.ascontiguousarray(u)) for u in unique], dtype=np.int64)
        return ids[inverse.reshape(-1)]

    def distinct_rows(self, pairs: IntArray) -> IntArray:
        unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
        ids = [self.rows.setdefault((int(a), int(b)), len(self.rows)) for a, b in unique.tolist()]
        return np.array(ids, dtype=np.int64)[inverse.reshape(-1)]

    def add(self, key: Any, sums: TaskSums) -> None:
        K = sums.K
        col = {name: sums.columns.index(name) for name in task_sum_columns(0)}  # the 8 before surv1
        col["surv1"], col["nk1"] = len(col), len(col) + K
        ids = self.distinct_columns(sums.X)
        pairs = [(col[a], col[b]) for a, b in _SCALAR_RATIOS.values()]
        surv = np.arange(col["surv1"], col["surv1"] + K)
        nk = np.arange(col["nk1"], col["nk1"] + K)
        local = np.concatenate(
            [
                np.array(pairs, dtype=np.int64).reshape(-1, 2),
                np.column_stack([surv, np.full(K, col["count"])]),
                np.column_stack([surv, nk]),
            ]
        ).astype(np.int64)
        rows = self.distinct_rows(ids[local])
        s = len(pairs)
        self.conditions[key] = ConditionRows(
            scalars=dict(zip(_SCALAR_RATIOS, rows[:s].tolist(), strict=True)),
            PEC=rows[s : s + K],
            PEC_elig=rows[s + K :],
            recovered=int(sum(sums.X[:, col["recovered"]].tolist())),
            eligible=int(sum(sums.X[:, col["eligible"]].tolist())),
        )

    def design(self) -> Design:
        pairs = sorted(self.rows.items(), key=lambda kv: kv[1])
        num = np.array([p[0][0] for p in pairs], dtype=np.int64)
        den = np.array([p[0][1] for p in pairs], dtype=np.int64)
        return Design(self.n_tasks, tuple(self.columns), num, den, dict(self.conditions))


#: The scalar metrics' (numerator, denominator) columns, in the order of :class:`Replicates`.
_SCALAR_RATIOS = {
    "TER": ("executable", "count"),
    "AUC_PEC": ("auc_num", "auc_den"),
    "mean_FED": ("fed", "count"),
    "success": ("success", "count"),
    "RR": ("recovered", "eligible"),
}


def designs(
    task_ids: Mapping[K, Iterable[str]],
    sums_of: Callable[[K, Sequence[str]], TaskSums],
    paired: bool = True,
) -> list[Design]:
    """The draws of one dataset: paired, one over the sorted union of task ids shared by every
    condition (BOOT-PAIRED); unpaired, one per condition over its own sorted tasks."""
    if paired:
        tasks = sorted({t for ids in task_ids.values() for t in ids})
        builder = _DesignBuilder(len(tasks))
        for key in task_ids:
            builder.add(key, sums_of(key, tasks))
        return [builder.design()]
    out = []
    for key, ids in task_ids.items():
        own = sorted(set(ids))
        builder = _DesignBuilder(len(own))
        builder.add(key, sums_of(key, own))
        out.append(builder.design())
    return out


# -- Planning, memory and the intervals --------------------------------------------------------


@attrs.frozen(slots=True)
class Plan:
    """How a design is computed: ``block`` resamples per block, its ratio rows in ``groups``
    (start, stop) each drawn over all B resamples, and the bytes that takes at its peak (BOOT-MEMORY)."""

    block: int
    groups: tuple[tuple[int, int], ...]
    peak_bytes: int
    blocks_per_group: int

    @property
    def blocks(self) -> int:
        return len(self.groups) * self.blocks_per_group


def _peak(design: Design, B: int, block: int, rows: int) -> int:
    """Bytes at the peak of a group of ``rows`` ratio rows with blocks of ``block`` resamples:
    the design's columns and their prepared copy (at most 16 bytes a cell), one block of
    :data:`CELL_BYTES` per cell with its sums and ratios, the group's replicates."""
    n = design.n_tasks
    prepared = 16 * n * min(len(design.columns), 2 * rows)
    cells = block * (n * CELL_BYTES + (2 * rows + min(len(design.columns), 2 * rows)) * 8)
    return design.column_bytes() + prepared + cells + rows * B * REPLICATE_BYTES


def plan(
    design: Design,
    B: int,
    block: int | None = None,
    group_bytes: int = GROUP_BYTES,
    memory_limit: int | None = None,
) -> Plan:
    """BOOT-BLOCK and BOOT-MEMORY: blocks and groups for ``design``.

    Groups hold at most ``group_bytes`` of replicates (at least one row). Under ``memory_limit``
    the group, then (unless ``block`` was given) the block, shrink until the peak fits; when even
    one row with blocks of one resample (or the given block) does not fit,
    :class:`BootstrapMemoryError` is raised, before anything is drawn.
    """
    size = _block(design.n_tasks, B, block)
    per = max(1, min(design.R, group_bytes // (REPLICATE_BYTES * B)))
    if memory_limit is not None:
        while per > 1 and _peak(design, B, size, per) > memory_limit:
            per = max(1, per // 2)
        while block is None and size > 1 and _peak(design, B, size, per) > memory_limit:
            size = max(1, size // 2)
        peak = _peak(design, B, size, per)
        if peak > memory_limit:
            per_block = _peak(design, B, 1, 1) - _peak(design, B, 0, 1)
            room = memory_limit - _peak(design, B, 0, 1)
            block_max = int(min(B, room // per_block)) if room > 0 else 0
            room_B = memory_limit - _peak(design, 0, 1, 1)
            B_max = int(room_B // REPLICATE_BYTES) if room_B > 0 else 0
            if block is not None and block_max >= 1:
                what = (
                    f"a block of {size} resamples x {design.n_tasks} tasks needs about {_size(peak)}, "
                    f"more than the {_size(memory_limit)} available"
                )
            else:
                what = (
                    f"{B} resamples of {design.n_tasks} tasks need about {_size(peak)} for one interval "
                    f"and a block of {size}, more than the {_size(memory_limit)} available"
                )
            raise BootstrapMemoryError(what, peak, memory_limit, block_max, B_max)
    groups = tuple((s, min(s + per, design.R)) for s in range(0, design.R, per))
    return Plan(size, groups, _peak(design, B, size, per), -(-B // size))


def _size(n: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


#: How a group's replicates are computed: ``runner(work, settings, block, tick)`` returns the
#: (rows x B) replicates of ``default_rng(seed)``'s resamples; the default draws them here.
Runner = Callable[[GroupWork, BootstrapSettings, int, Callable[[], None]], FloatArray]


def local_runner(
    work: GroupWork, settings: BootstrapSettings, block: int, tick: Callable[[], None]
) -> FloatArray:
    """:data:`Runner` in this process: one generator, blocks in order."""
    return work.replicates(np.random.default_rng(settings.seed), settings.B, block, tick)


def bootstrap_intervals(
    task_ids: Mapping[K, Iterable[str]],
    sums_of: Callable[[K, Sequence[str]], TaskSums],
    settings: BootstrapSettings,
    paired: bool = True,
    *,
    block: int | None = None,
    group_bytes: int = GROUP_BYTES,
    memory_limit: int | None = None,
    progress: ProgressFn | None = None,
    runner: Runner | None = None,
) -> dict[K, Intervals]:
    """Every condition's :class:`Intervals`, bit for bit those of :func:`bootstrap_task_sums` and
    :func:`intervals`, in bounded memory (BOOT-BLOCK): blocks of ``block`` resamples (default
    :func:`default_block`, about 256 MiB), the replicates of at most ``group_bytes`` worth of
    intervals at a time (a group needing more draws the stream again), each distinct ratio
    computed once (BOOT-DEDUP). Everything is planned first: :class:`BootstrapMemoryError` is
    raised before any draw when ``memory_limit`` cannot hold it (BOOT-MEMORY). ``progress(done,
    total)`` is called after each block; ``runner`` computes a group (default: here).
    """
    found = designs(task_ids, sums_of, paired)
    plans = [plan(d, settings.B, block, group_bytes, memory_limit) for d in found]
    out = design_intervals(found, plans, settings, progress, runner)
    return {key: out[key] for key in task_ids}


def design_intervals(
    found: Sequence[Design],
    plans: Sequence[Plan],
    settings: BootstrapSettings,
    progress: ProgressFn | None = None,
    runner: Runner | None = None,
) -> dict[Any, Intervals]:
    """:func:`bootstrap_intervals` of designs already planned (``plans[i]`` for ``found[i]``);
    ``progress(done, total)`` counts the blocks of all of them."""
    run = local_runner if runner is None else runner
    total = sum(p.blocks for p in plans)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    out: dict[Any, Intervals] = {}
    for design, p in zip(found, plans, strict=True):
        row_intervals: list[tuple[float, float] | None] = []
        row_dropped: list[int] = []
        for start, stop in p.groups:
            values = run(design.work(start, stop), settings, p.block, tick)
            nan = np.isnan(values)
            row_dropped += np.count_nonzero(nan, axis=1).tolist()
            row_intervals += percentile_intervals_rows(values, settings.level, nan, overwrite=True)
            del values, nan
        for key, where in design.conditions.items():
            names = list(where.scalars)
            out[key] = Intervals(
                scalars={n: row_intervals[where.scalars[n]] for n in names},
                RR_wilson=wilson_interval(where.recovered, where.eligible, settings.level),
                PEC=tuple(row_intervals[i] for i in where.PEC.tolist()),
                PEC_elig=tuple(row_intervals[i] for i in where.PEC_elig.tolist()),
                dropped={n: row_dropped[where.scalars[n]] for n in names},
                dropped_PEC_elig=tuple(row_dropped[i] for i in where.PEC_elig.tolist()),
            )
    return out
