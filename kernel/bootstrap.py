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
from collections.abc import Mapping, Sequence
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
    return counts.astype(np.int64)


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


def task_sums(cohort: Cohort, tasks: Sequence[str]) -> TaskSums:
    """Sum every per-rollout quantity of ``cohort`` by task, in the order of ``tasks``."""
    position = {t: j for j, t in enumerate(tasks)}
    row = np.fromiter((position[t] for t in cohort.task), dtype=np.int64, count=cohort.N)
    T, fed, Y = cohort.T, cohort.fed, cohort.Y
    L = math.lcm(*(int(t) for t in np.unique(T)))
    K = int(T.max())
    k = np.arange(1, K + 1, dtype=np.int64)
    per_rollout = np.column_stack(
        [
            np.ones(cohort.N, dtype=np.int64),  # count
            (fed == T + 1).astype(np.int64),  # fully executable
            (fed - 1) * (L // T),  # AUC numerator x L
            np.full(cohort.N, L, dtype=np.int64),  # AUC denominator: count x L
            fed,  # FED
            Y.astype(np.int64),  # success
            (fed <= T).astype(np.int64),  # RR-eligible
            (Y & (fed <= T)).astype(np.int64),  # recovered
            (fed[:, None] > k[None, :]).astype(np.int64),  # survivors at k
            (T[:, None] >= k[None, :]).astype(np.int64),  # eligible at k
        ]
    )
    X = np.zeros((len(tasks), per_rollout.shape[1]), dtype=np.int64)
    np.add.at(X, row, per_rollout)
    columns = (
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
    return TaskSums(X=X, columns=columns, L=L, K=K)


def weighted_sums(W: IntArray, X: IntArray) -> npt.NDArray[np.float64] | npt.NDArray[np.object_]:
    """W @ X exactly: float64 (BLAS) when every sum is below 2^53, else Python integers."""
    bound = int(W.sum(axis=1).max()) * int(np.abs(X).max(initial=0))
    if bound < _EXACT_FLOAT_LIMIT:
        result: npt.NDArray[np.float64] = W.astype(np.float64) @ X.astype(np.float64)
        return result
    exact: npt.NDArray[np.object_] = W.astype(object) @ X.astype(object)
    return exact


def _ratio(num: npt.NDArray[Any], den: npt.NDArray[Any]) -> FloatArray:
    """num / den rounded once to the nearest double; NaN where den = 0 (BOOT-REPLICATE, BOOT-DROP)."""
    if num.dtype == np.float64 and den.dtype == np.float64:
        with np.errstate(divide="ignore", invalid="ignore"):
            out: FloatArray = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        return out
    flat = [
        (int(a) / int(b)) if int(b) != 0 else math.nan
        for a, b in zip(num.reshape(-1), den.reshape(-1), strict=True)
    ]
    return np.array(flat, dtype=np.float64).reshape(num.shape)


@attrs.frozen(slots=True)
class Replicates:
    """Bootstrap replicates of one condition: metric -> array of B values (NaN = left out)."""

    scalars: Mapping[str, FloatArray]
    PEC: FloatArray
    PEC_elig: FloatArray


def replicates(W: IntArray, sums: TaskSums) -> Replicates:
    """Every metric's B replicates from the resample counts and the per-task sums."""
    Z = weighted_sums(W, sums.X)
    col = {name: i for i, name in enumerate(sums.columns)}
    count = Z[:, col["count"]]
    K = sums.K
    surv = Z[:, col["surv1"] : col["surv1"] + K]
    nk = Z[:, col["nk1"] : col["nk1"] + K]
    scalars = {
        "TER": _ratio(Z[:, col["executable"]], count),
        "AUC_PEC": _ratio(Z[:, col["auc_num"]], Z[:, col["auc_den"]]),
        "mean_FED": _ratio(Z[:, col["fed"]], count),
        "success": _ratio(Z[:, col["success"]], count),
        "RR": _ratio(Z[:, col["recovered"]], Z[:, col["eligible"]]),
    }
    return Replicates(
        scalars=scalars,
        PEC=_ratio(surv, np.repeat(count[:, None], K, axis=1)),
        PEC_elig=_ratio(surv, nk),
    )


def percentile_interval(values: FloatArray, level: float) -> tuple[float, float] | None:
    """BOOT-PERCENTILE: the linear-interpolation percentile interval of the defined replicates.

    Exactly the arithmetic of ``scipy.stats.quantile(y, [a, 1 - a], method='linear')`` with
    ``a = (1 - level) / 2``: ``jg = p n + (1 - p)``, ``j = floor(jg) - 1``, ``g = jg mod 1``,
    ``(1 - g) y[j] + g y[j + 1]`` over the sorted values. ``None`` if no replicate is defined.
    """
    y = np.sort(values[~np.isnan(values)])
    if y.shape[0] == 0:
        return None
    alpha = np.float64((1 - level) / 2)
    return (_quantile_linear(y, alpha), _quantile_linear(y, np.float64(1) - alpha))


def _quantile_linear(y: FloatArray, p: np.float64) -> float:
    n = np.float64(y.shape[0])
    jg = p * n + (np.float64(1) - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    if j < 0:
        g = np.float64(0)
    j = min(max(j, np.float64(0)), n - 1)
    jp1 = min(max(jp1, np.float64(0)), n - 1)
    return float((1 - g) * y[int(j)] + g * y[int(jp1)])


def wilson_interval(successes: int, n: int, level: float) -> tuple[float, float] | None:
    """BOOT-WILSON: the Wilson score interval for successes/n; ``None`` when n = 0.

    ``z`` is the standard normal quantile at (1 + level)/2;
    centre = (p + z^2/(2n)) / (1 + z^2/n), half-width = z sqrt(p(1-p)/n + z^2/(4n^2)) / (1 + z^2/n).
    """
    if n == 0:
        return None
    z = NormalDist().inv_cdf((1 + level) / 2)
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return (centre - half, centre + half)


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
    K = reps.PEC.shape[1]
    return Intervals(
        scalars={name: percentile_interval(v, level) for name, v in reps.scalars.items()},
        RR_wilson=wilson_interval(recovered, eligible, level),
        PEC=tuple(percentile_interval(reps.PEC[:, k], level) for k in range(K)),
        PEC_elig=tuple(percentile_interval(reps.PEC_elig[:, k], level) for k in range(K)),
        dropped={name: int(np.count_nonzero(np.isnan(v))) for name, v in reps.scalars.items()},
        dropped_PEC_elig=tuple(int(np.count_nonzero(np.isnan(reps.PEC_elig[:, k]))) for k in range(K)),
    )


def missing_tasks(cohorts: Mapping[K, Cohort]) -> dict[K, tuple[str, ...]]:
    """BOOT-PAIRED: for each condition, the dataset's task ids it lacks (empty when paired)."""
    union = sorted({t for c in cohorts.values() for t in c.task})
    return {key: tuple(t for t in union if t not in set(c.task)) for key, c in cohorts.items()}


def bootstrap_dataset(
    cohorts: Mapping[K, Cohort], settings: BootstrapSettings, paired: bool = True
) -> dict[K, Replicates]:
    """Replicates for every condition of one dataset.

    Paired (default): one matrix over the sorted union of task ids, shared by all conditions;
    the caller must have checked :func:`missing_tasks`. Unpaired: each condition draws its own
    matrix over its own sorted task ids, from the same seed.
    """
    if paired:
        tasks = sorted({t for c in cohorts.values() for t in c.task})
        W = resample_counts(len(tasks), settings.B, settings.seed)
        return {key: replicates(W, task_sums(c, tasks)) for key, c in cohorts.items()}
    out: dict[K, Replicates] = {}
    for key, c in cohorts.items():
        own = sorted(set(c.task))
        out[key] = replicates(resample_counts(len(own), settings.B, settings.seed), task_sums(c, own))
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
