"""Leaderboards: every system of a dataset ranked by success and by prefix executability
(spec: spec/leaderboard.md, LB-*; pass^k: spec/passk.md, PASSK-*).

:func:`leaderboard_document` turns per-condition accumulators into the ``leaderboard --json``
document: per dataset, one entry per system with its point estimates (exact), intervals, rank
and rank interval per metric; Kendall's tau-b between the success ranking and each other
metric's; and the pairs of systems that success and another metric order differently, with the
share of resamples in which each order holds. Every replicate comes from the dataset's one
resample stream, drawn in bounded blocks by the kernel's
:func:`~prefixexec.kernel.bootstrap.resample_blocks`, the rows :func:`resample_counts` gives
``score`` (BOOT-DRAW, BOOT-BLOCK; LB-MEMORY plans the peak first), so the intervals equal
``score``'s (RR's is ``score``'s Wilson interval, its bootstrap one ``ci_bootstrap``: LB-CI) and
every rank, tau-b and order share is paired.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from prefixexec.adapters import InputError
from prefixexec.inference import restrict
from prefixexec.kernel import ConditionKey, ConditionMetrics
from prefixexec.kernel import passk as pk
from prefixexec.kernel.accumulator import Accumulator, AccumulatorSet
from prefixexec.kernel.bootstrap import _SCALAR_RATIOS as scalar_ratios
from prefixexec.kernel.bootstrap import (
    BLOCK_BYTES,
    CELL_BYTES,
    GROUP_BYTES,
    REPLICATE_BYTES,
    BootstrapSettings,
    IntArray,
    default_block,
    percentile_intervals_rows,
    resample_blocks,
    task_sum_columns,
    weighted_sums,
    wilson_interval,
)
from prefixexec.kernel.bootstrap import _ratio as ratio
from prefixexec.scoring import approx, exact

FloatArray = npt.NDArray[np.float64]

#: JSON format name and version (LB-JSON).
JSON_FORMAT = "prefixexec-leaderboard"
JSON_VERSION = 1

#: The ranked metrics, in table order (LB-METRICS); every one is "higher is better".
METRICS: tuple[str, ...] = ("success", "TER", "AUC_PEC", "mean_FED", "RR", "pass_hat_k", "ter_hat_k")
#: The metrics compared with the success ranking (LB-KENDALL, LB-FLIPS).
PREFIX_METRICS: tuple[str, ...] = METRICS[1:]
#: Printed names; ``k`` is replaced by the leaderboard's k.
TITLES: Mapping[str, str] = {
    "success": "success",
    "TER": "TER",
    "AUC_PEC": "AUC-PEC",
    "mean_FED": "mean FED",
    "RR": "RR",
    "pass_hat_k": "pass^k",
    "ter_hat_k": "TER^k",
}
#: What a system is (LB-SYSTEM): the condition, or one of its keys.
BY: tuple[str, ...] = ("condition", "model", "method")
#: The scalar metrics whose replicates the kernel's bootstrap gives (Replicates.scalars).
_SCALARS = ("success", "TER", "AUC_PEC", "mean_FED", "RR")

#: The spec ID of every part of the document (LB-JSON: ``spec``).
SPEC_IDS: Mapping[str, str] = {
    "systems": "LB-SYSTEM",
    "tasks": "LB-TASKS",
    "metrics": "LB-METRICS",
    "ci": "PASSK-BOOT",
    "rank": "LB-RANK",
    "rank_ci": "LB-RANK-CI",
    "kendall": "LB-KENDALL",
    "flips": "LB-FLIPS",
    "pass_hat_k": "PASSK-HAT",
    "pass_at_k": "PASSK-AT",
    "ter_hat_k": "PASSK-TER",
    "ter_at_k": "PASSK-TER",
    "trials": "PASSK-TRIALS",
}


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class LeaderboardOptions:
    """What the leaderboard ranks and how (LB-*): ``by`` names a system, ``metrics`` are ranked
    beside success, ``k`` of pass^k / TER^k (None: the largest every system allows), ``trials``
    the PASSK-TRIALS convention, ``shared_tasks`` scores systems on the tasks all share."""

    by: str = attrs.field(default="condition")
    metrics: tuple[str, ...] = attrs.field(default=PREFIX_METRICS, converter=_names)
    k: int | None = attrs.field(default=None)
    trials: pk.Convention = attrs.field(default="tau2")
    shared_tasks: bool = False

    @by.validator
    def _check_by(self, attribute: attrs.Attribute[str], value: str) -> None:
        if value not in BY:
            raise ValueError(f"'by' must be one of {', '.join(BY)}: {value!r}")

    @metrics.validator
    def _check_metrics(self, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
        unknown = [m for m in value if m not in PREFIX_METRICS]
        if unknown:
            raise ValueError(f"'metrics' must be among {', '.join(PREFIX_METRICS)}: {', '.join(unknown)}")

    @k.validator
    def _check_k(self, attribute: attrs.Attribute[int | None], value: int | None) -> None:
        if value is not None and (isinstance(value, bool) or value < 1):
            raise ValueError(f"'k' must be an integer >= 1: {value!r}")

    @trials.validator
    def _check_trials(self, attribute: attrs.Attribute[str], value: str) -> None:
        if value not in pk.CONVENTIONS:
            raise ValueError(f"'trials' must be one of {', '.join(pk.CONVENTIONS)}: {value!r}")

    @property
    def ranked(self) -> tuple[str, ...]:
        """Success, then the chosen metrics in table order."""
        return ("success", *(m for m in PREFIX_METRICS if m in self.metrics))


@attrs.frozen(slots=True)
class _System:
    """One system of a dataset: its label, condition, accumulator and trial counts per task."""

    label: str
    key: ConditionKey
    acc: Accumulator
    metrics: ConditionMetrics
    n: tuple[int, ...]
    c: tuple[int, ...]
    e: tuple[int, ...]
    run_trials: int

    @property
    def cap(self) -> int:
        return pk.max_k(self.n)


def system_label(key: ConditionKey, by: str) -> str:
    """LB-SYSTEM: ``model / method`` for ``condition``, else that key's value."""
    return f"{key.model} / {key.method}" if by == "condition" else str(getattr(key, by))


def _labelled(
    dataset: str, items: Sequence[tuple[ConditionKey, Accumulator]], by: str
) -> dict[str, tuple[ConditionKey, Accumulator]]:
    out: dict[str, tuple[ConditionKey, Accumulator]] = {}
    for key, acc in items:
        label = system_label(key, by)
        if label in out:
            other = out[label][0]
            raise InputError(
                "--by",
                f"{dataset}: {other.model} / {other.method} and {key.model} / {key.method} have the same "
                f"{by} {label!r}, so they cannot be one system each; use --by condition, or --select one",
            )
        out[label] = (key, acc)
    return out


def _shown(tasks: Sequence[str]) -> str:
    return ", ".join(tasks[:10]) + (f", ... ({len(tasks)} in all)" if len(tasks) > 10 else "")


def _common_tasks(
    dataset: str, systems: Mapping[str, tuple[ConditionKey, Accumulator]], shared_tasks: bool
) -> tuple[tuple[str, ...] | None, dict[str, Any]]:
    """LB-TASKS: the task list every system is scored on, and what was dropped to get it;
    ``None`` when the systems do not share one task set and ``shared_tasks`` is off: each system
    is then scored on its own tasks (LB-UNPAIRED)."""
    sets = {label: set(acc.tasks) for label, (_, acc) in systems.items()}
    union = sorted(set().union(*sets.values()))
    shared = sorted(set.intersection(*sets.values()))
    lacking = {label: [t for t in union if t not in have] for label, have in sets.items()}
    info: dict[str, Any] = {"union": len(union), "shared": len(shared), "dropped": len(union) - len(shared)}
    if len(shared) == len(union):
        info["dropped_by_system"] = {label: 0 for label in systems}
        return tuple(union), info
    if not shared_tasks:
        # LB-UNPAIRED: each system on its own tasks, its interval from its own resamples
        info["dropped"] = 0
        info["dropped_by_system"] = {label: 0 for label in systems}
        info["paired"] = False
        info["lacking_by_system"] = {label: len(ts) for label, ts in lacking.items()}
        return None, info
    if not shared:
        raise InputError("--shared-tasks", f"{dataset}: no task is shared by every system")
    info["dropped_by_system"] = {label: len(sets[label]) - len(shared) for label in systems}
    from prefixexec.inference import few_tasks_warning

    warnings = few_tasks_warning(len(shared))  # LB-FEW-TASKS: as compare warns (CMP-FEW-TASKS)
    if warnings:
        info["warnings"] = warnings
    return tuple(shared), info


def _systems(
    dataset: str, items: Sequence[tuple[ConditionKey, Accumulator]], options: LeaderboardOptions
) -> tuple[list[_System], tuple[str, ...] | None, dict[str, Any]]:
    labelled = _labelled(dataset, items, options.by)
    tasks, info = _common_tasks(dataset, labelled, options.shared_tasks)
    out: list[_System] = []
    for label, (key, acc) in labelled.items():
        run_trials = acc.distinct_trials()  # of the whole condition, before any task is dropped
        if tasks is not None and acc.tasks != tasks:
            acc = restrict(acc, tasks)
        counts, executable, successes = acc.trial_counts()
        n = pk.trials_per_task(counts.tolist(), run_trials, options.trials)
        out.append(
            _System(
                label=label,
                key=key,
                acc=acc,
                metrics=acc.metrics(),
                n=n,
                c=tuple(int(x) for x in successes),
                e=tuple(int(x) for x in executable),
                run_trials=run_trials,
            )
        )
    return out, tasks, info


def _point(s: _System, metric: str, k: int, curves: Mapping[str, Sequence[Fraction]]) -> Fraction | None:
    if metric in curves:
        return curves[metric][k - 1]
    value: Fraction | None = getattr(s.metrics, metric)
    return value


# ------------------------------------------------------------------------------------- ranks


def average_ranks(values: FloatArray) -> FloatArray:
    """LB-RANK: rank of each column in every row of ``values`` (rows x systems), 1 = largest,
    ties by the average of the ranks they span: ``1 + #{greater} + (#{equal} - 1) / 2``.

    Each row is sorted once and every tie group's first and last position found along it:
    O(S log S) a row (comparing every pair was S^2 a row, HOSTILE-COUNT-COST), in blocks of
    about a million values (bounded memory)."""
    rows, S = values.shape
    out = np.empty((rows, S), dtype=np.float64)
    if S == 0:
        return out
    step = max(1, _BLOCK_VALUES // S)
    at = np.arange(S, dtype=np.int64)
    for start in range(0, rows, step):
        block = values[start : start + step]
        order = np.argsort(block, axis=1, kind="stable")
        ordered = np.take_along_axis(block, order, axis=1)
        differs = ordered[:, 1:] != ordered[:, :-1]
        first = np.where(np.concatenate([np.ones((block.shape[0], 1), bool), differs], axis=1), at, 0)
        first = np.maximum.accumulate(first, axis=1)
        last = np.where(np.concatenate([differs, np.ones((block.shape[0], 1), bool)], axis=1), at, S)
        last = np.minimum.accumulate(last[:, ::-1], axis=1)[:, ::-1]
        greater = S - 1 - last
        equal = last - first + 1
        np.put_along_axis(out[start : start + step], order, 1 + greater + (equal - 1) / 2, axis=1)
    return out


#: Values handled at once by the blocked rank and Kendall computations (bounded memory).
_BLOCK_VALUES = 1 << 20


def exact_ranks(values: Sequence[Fraction]) -> list[Fraction]:
    """:func:`average_ranks` of exact point values: one sort of the distinct values and their
    counts (comparing every pair was quadratic in the systems, HOSTILE-COUNT-COST)."""
    counts: dict[Fraction, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    greater: dict[Fraction, int] = {}
    above = 0
    for v in sorted(counts, reverse=True):
        greater[v] = above
        above += counts[v]
    return [1 + greater[v] + Fraction(counts[v] - 1, 2) for v in values]


def pair_signs(values: FloatArray) -> npt.NDArray[np.int8]:
    """sign(v_i - v_j) for every pair i < j of the columns (rows x pairs, numpy.triu_indices order)."""
    i, j = np.triu_indices(values.shape[1], 1)
    signs: npt.NDArray[np.int8] = np.sign(values[:, i] - values[:, j]).astype(np.int8)
    return signs


def tau_b(x: npt.NDArray[Any], y: npt.NDArray[Any]) -> FloatArray:
    """LB-KENDALL: Kendall's tau-b of each row's two rankings, from their pair signs:
    ``(n_c - n_d) / sqrt((n_0 - n_1)(n_0 - n_2))``; NaN when either ranking is all ties."""
    num = (x.astype(np.float64) * y).sum(axis=1)  # integers, exact in float64
    den = np.sqrt(np.count_nonzero(x, axis=1).astype(np.float64) * np.count_nonzero(y, axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = num / den
    out[den == 0] = np.nan
    return out


def dense_ranks(values: npt.NDArray[Any]) -> IntArray:
    """Each row's values replaced by their dense rank (0 = smallest, equal values equal ranks)."""
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    new = np.ones(ordered.shape, dtype=np.int64)
    new[:, 0] = 0
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    out = np.empty(values.shape, dtype=np.int64)
    np.put_along_axis(out, order, np.cumsum(new, axis=1), axis=1)
    return out


def _tied_pairs(keys: IntArray, width: int) -> IntArray:
    """Per row, the pairs of equal values among ``keys`` (non-negative integers below ``width``)."""
    rows = keys.shape[0]
    flat = (np.arange(rows, dtype=np.int64)[:, None] * width + keys).reshape(-1)
    unique, counts = np.unique(flat, return_counts=True)
    out = np.zeros(rows, dtype=np.int64)
    np.add.at(out, unique // width, counts * (counts - 1) // 2)
    return out


def _inversions(values: IntArray) -> IntArray:
    """Per row, the pairs i < j with ``values[i] > values[j]`` (non-negative integers below the
    row length + 1): a bottom-up merge count, O(n log^2 n) a row, vectorised over rows."""
    rows, n = values.shape
    total = np.zeros(rows, dtype=np.int64)
    if n < 2:
        return total
    size = 1 << (n - 1).bit_length()
    top = n + 1  # the padding value: after every value, so it is never counted (see below)
    cur = np.full((rows, size), n, dtype=np.int64)
    cur[:, :n] = values
    # Padding sits at the end: a left half holding padding has only padding on its right.
    w = 1
    while w < size:
        blocks = size // (2 * w)
        pairs = cur.reshape(rows, blocks, 2, w)
        base = (np.arange(rows * blocks, dtype=np.int64) * top).reshape(rows, blocks, 1)
        left = (pairs[:, :, 0, :] + base).reshape(-1)  # sorted: halves are sorted, bases increase
        right = pairs[:, :, 1, :] + base
        at = np.searchsorted(left, right.reshape(-1), side="right").reshape(rows, blocks, w)
        start = (np.arange(rows * blocks, dtype=np.int64) * w).reshape(rows, blocks, 1)
        total += (w - (at - start)).reshape(rows, -1).sum(axis=1)
        cur = np.sort(cur.reshape(rows, blocks, 2 * w), axis=2).reshape(rows, size)
        w *= 2
    return total


@attrs.frozen(slots=True)
class KendallCounts:
    """LB-KENDALL's counts per row of two rankings of n systems: ``pairs`` (n_0), pairs tied in
    x (n_1), in y (n_2), in both (n_3), and ``discordant`` (n_d); concordant is
    ``n_0 - n_1 - n_2 + n_3 - n_d``."""

    pairs: int
    ties_x: IntArray
    ties_y: IntArray
    ties_both: IntArray
    discordant: IntArray

    @property
    def concordant(self) -> IntArray:
        out: IntArray = self.pairs - self.ties_x - self.ties_y + self.ties_both - self.discordant
        return out

    @property
    def flipped(self) -> IntArray:
        """Pairs whose two signs differ (LB-FLIPS): neither concordant nor tied in both."""
        out: IntArray = self.pairs - self.concordant - self.ties_both
        return out

    def tau_b(self) -> FloatArray:
        """:func:`tau_b` from the counts, with its floating-point operations."""
        num = (self.concordant - self.discordant).astype(np.float64)
        den = np.sqrt((self.pairs - self.ties_x).astype(np.float64) * (self.pairs - self.ties_y))
        with np.errstate(divide="ignore", invalid="ignore"):
            out: FloatArray = num / den
        out[den == 0] = np.nan
        return out


def kendall_counts(x: npt.NDArray[Any], y: npt.NDArray[Any]) -> KendallCounts:
    """Knight's O(n log n) count of each row's concordant, discordant and tied pairs of two
    rankings (rows x n, no NaN): sort by (x, y), count y's inversions (HOSTILE-COUNT-COST:
    comparing every pair was quadratic in the systems)."""
    rows, n = x.shape
    if n < 2:
        none = np.zeros(rows, dtype=np.int64)
        return KendallCounts(0, none, none, none, none)
    rx, ry = dense_ranks(x), dense_ranks(y)
    joint = rx * n + ry
    order = np.argsort(joint, axis=1, kind="stable")
    return KendallCounts(
        pairs=n * (n - 1) // 2,
        ties_x=_tied_pairs(rx, n),
        ties_y=_tied_pairs(ry, n),
        ties_both=_tied_pairs(joint, n * n),
        discordant=_inversions(np.take_along_axis(ry, order, axis=1)),
    )


def _exact_ranks_dense(values: Sequence[Fraction]) -> IntArray:
    """Exact values as dense ranks (one sort of the distinct values)."""
    position = {v: i for i, v in enumerate(sorted(set(values)))}
    return np.array([position[v] for v in values], dtype=np.int64)


def _sign(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


# ---------------------------------------------------------------------------------- datasets


# The bounded, blocked draw (BOOT-BLOCK, LB-MEMORY). The replicates the ranks need (every
# system's five scalar metrics and pass^k, TER^k at the leaderboard's k: _KEPT) are kept whole
# (systems x B each); every other curve point (pass^k, pass@k, TER^k, TER@k at each k up to a
# system's cap) needs only its interval, so those rows are computed a group at a time, the
# stream drawn again for each group, and dropped once their intervals are taken. The resample
# counts come block by block from the kernel's resample_blocks: the rows of resample_counts,
# the same stream in the same order (BOOT-DRAW), so every replicate is the one the whole
# matrix gave, exactly.

#: The replicates every system keeps over all B resamples (ranks, rank intervals, Kendall, flips).
_KEPT: tuple[str, ...] = (*_SCALARS, "pass_hat_k", "ter_hat_k")
#: Bytes per kept replicate (LB-MEMORY): the double, its rank in its resample, the copy the
#: percentile selection or the ranked block makes, and the NaN flags.
KEEP_BYTES = 32
#: Per task sums of the scalar metrics: the first columns of an accumulator's task sums.
_SCALAR_COLUMNS = task_sum_columns(0)
#: Each scalar metric's (numerator, denominator) among them, as the kernel's replicates take them.
_SCALAR_AT = {m: (_SCALAR_COLUMNS.index(a), _SCALAR_COLUMNS.index(b)) for m, (a, b) in scalar_ratios.items()}

#: One curve point of one system: (system, kind, k).
_Point = tuple[int, str, int]


def _curve_column(s: _System, kind: str, k: int) -> tuple[Any, Any]:
    """PASSK-BOOT's integer (numerator, denominator) task columns of one curve point."""
    num, den = pk.task_columns(s.n, s.c if kind.startswith("pass") else s.e, k, kind.endswith("_at_k"))
    if num.dtype != object:
        return num, den
    # Python integers: the same ratio in lowest terms under every resample (divide by the gcd of
    # L and every numerator). A task whose pass^k is 0 or 1 then costs nothing, and a column of
    # 0s and 1s (pass^k beyond the largest c, pass@k beyond n - c) is int64 again: the replicates
    # are the same rationals, so the same doubles (BOOT-REPLICATE), without big-integer products.
    L = int(den[0])
    g = math.gcd(L, *num.tolist())
    if g == 1:
        return num, den
    top = L // g
    dtype: type = np.int64 if top < 2**62 else object
    reduced: npt.NDArray[Any] = np.array([v // g for v in num.tolist()], dtype=dtype)
    return reduced, np.full(den.shape[0], top, dtype=dtype)


def _comb_bits(n: int, k: int) -> int:
    """An upper bound on the bits of C(n, k) (lgamma, one bit of slack)."""
    return math.ceil((math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(2)) + 1


def _sum_bits(s: _System, k: int, n_tasks: int) -> int:
    """An upper bound on the bits of n L for a curve point of ``s`` at ``k``: L divides the product
    of the distinct C(n_j, k), and a weighted sum adds at most the bits of the tasks drawn."""
    return n_tasks.bit_length() + sum(_comb_bits(n, k) for n in set(s.n))


def _limbs(s: _System, k: int, n_tasks: int) -> int:
    """PASSK-BOOT-FIXED's limbs per task of a curve point of ``s`` at ``k`` (0: a narrow column,
    every sum below 2^53). Every nonzero pass^k or pass@k value is at least 1 / the largest
    C(n_j, k)."""
    if _sum_bits(s, k, n_tasks) < 53:
        return 0
    return pk.fixed_limbs(max(_comb_bits(n, k) for n in set(s.n)), n_tasks)


def _sum_bytes(s: _System, k: int, n_tasks: int) -> int:
    """Bytes one weighted sum of a curve point of ``s`` at ``k`` takes per resample of a block:
    below 2^53 the sum with its ratio and a temporary (24); beyond, PASSK-BOOT-FIXED's limb sums
    (8 bytes a limb) and the replicate (8)."""
    limbs = _limbs(s, k, n_tasks)
    return 24 if limbs == 0 else 8 * limbs + 8


def _column_bytes(s: _System, k: int, n_tasks: int) -> int:
    """Bytes a curve point's task columns hold for a whole pass: the int64 pair below 2^53 (16 a
    task); beyond, the Python-integer numerators (twice: the column and PASSK-BOOT-FIXED's copy,
    each of at most the bits of n L) with the shared L, and the float64 limbs (8 a limb)."""
    limbs = _limbs(s, k, n_tasks)
    if limbs == 0:
        return 16 * n_tasks
    return n_tasks * (2 * (_sum_bits(s, k, n_tasks) // 8 + 40) + 8 + 8 * limbs)


@attrs.frozen(slots=True)
class _Plan:
    """How a dataset's replicates are drawn: ``block`` resamples a block, the curve points of
    each pass (the first pass also computes the kept replicates), and the bytes at the peak."""

    block: int
    passes: tuple[tuple[_Point, ...], ...]
    peak: int


def _plan(systems: Sequence[_System], n_tasks: int, B: int, k: int, limit: int | None) -> _Plan:
    """LB-MEMORY: blocks and passes whose peak fits ``limit`` (bytes; None: BOOT-BLOCK's defaults),
    or one error line naming the largest ``--bootstrap`` that fits, before anything is drawn.

    The peak is the kept replicates (:data:`KEEP_BYTES` each, :data:`_KEPT` per system and
    resample), the scalar task sums, one pass's replicates (REPLICATE_BYTES each) and task
    columns (:func:`_column_bytes`), and one block: CELL_BYTES per resample and task plus every
    weighted sum of the pass (:func:`_sum_bytes`), and the temporaries of PASSK-BOOT-FIXED's
    rounding step (``passk.fixed_temp_bytes``)."""
    S = len(systems)
    points = [
        (i, kind, j)
        for i, s in enumerate(systems)
        for j in range(1, s.cap + 1)
        for kind in pk.KINDS
        if not (j == k and kind in _KEPT)
    ]
    cost = {(i, j): _sum_bytes(systems[i], j, n_tasks) for i, _, j in points}
    held = {(i, j): _column_bytes(systems[i], j, n_tasks) for i, _, j in points}
    kept_cost = sum(_sum_bytes(s, k, n_tasks) for s in systems) * 2 + S * len(_SCALAR_COLUMNS) * 24
    kept_held = sum(_column_bytes(s, k, n_tasks) for s in systems) * 2
    fixed = n_tasks * S * len(_SCALAR_COLUMNS) * 8 + B * S * len(_KEPT) * KEEP_BYTES + kept_held
    # The rounding step's temporaries (PASSK-BOOT-FIXED), for the most limbs of any point.
    limbs = max(
        [_limbs(systems[i], j, n_tasks) for i, _, j in points] + [_limbs(s, k, n_tasks) for s in systems]
    )

    def passes(per: int) -> list[list[_Point]]:
        return [points[a : a + per] for a in range(0, len(points), per)] or [[]]

    def per_resample(per: int) -> int:
        widest = max(sum(cost[(i, j)] for i, _, j in p) for p in passes(per))
        return n_tasks * CELL_BYTES + kept_cost + widest

    def columns(per: int) -> int:
        return max(sum(held[(i, j)] for i, _, j in p) for p in passes(per))

    def peak(per: int, block: int) -> int:
        temp = pk.fixed_temp_bytes(limbs, block) if limbs else 0
        return (
            fixed
            + min(per, len(points)) * B * REPLICATE_BYTES
            + columns(per)
            + block * per_resample(per)
            + temp
        )

    per = max(1, GROUP_BYTES // (REPLICATE_BYTES * B))
    block = max(1, min(default_block(n_tasks, B), BLOCK_BYTES // per_resample(per)))
    if limit is not None:
        while per > 1 and peak(per, block) > limit:
            per = max(1, per // 2)
        while block > 1 and peak(per, block) > limit:
            block = max(1, block // 2)
        if peak(per, block) > limit:
            need = peak(per, block)
            each = S * len(_KEPT) * KEEP_BYTES + REPLICATE_BYTES  # what one more resample costs
            most = max(0, (limit - (need - B * each)) // each)
            advice = f"use --bootstrap {most} or less" if most >= 1 else "use --bootstrap 0 (no intervals)"
            raise InputError(
                "--bootstrap",
                f"the leaderboard keeps {len(_KEPT)} replicates of each of its {S} systems in all {B} "
                f"resamples of {n_tasks} tasks, about {_bytes(need)} even drawn one resample at a "
                f"time, more than the {_bytes(limit)} available; {advice} (LB-MEMORY)",
            )
    return _Plan(block, tuple(tuple(p) for p in passes(per)), peak(per, block))


def _bytes(n: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _draw(
    systems: Sequence[_System],
    tasks: Sequence[str],
    settings: BootstrapSettings,
    block: int,
    X: IntArray | None,
    points: Sequence[_Point],
    k: int,
) -> tuple[FloatArray | None, FloatArray]:
    """One pass over the resample stream, ``block`` resamples at a time: with ``X`` (the scalar
    task sums of every system, side by side) the kept replicates (_KEPT x systems x B), and the
    replicates of ``points`` (points x B)."""
    n_tasks, B, S = len(tasks), settings.B, len(systems)
    width = len(_SCALAR_COLUMNS)
    kept = None if X is None else np.empty((len(_KEPT), S, B), dtype=np.float64)
    at_k = (
        [] if X is None else [_curve_column(s, kind, k) for s in systems for kind in _KEPT[len(_SCALARS) :]]
    )
    columns = [_curve_column(systems[i], kind, j) for i, kind, j in points]
    # Prepared once for the pass (the fixed-point limbs of wide columns, PASSK-BOOT-FIXED).
    kept_curve = pk.prepare_columns(at_k, n_tasks)
    curve = pk.prepare_columns(columns, n_tasks)
    out = np.empty((len(columns), B), dtype=np.float64)
    done = 0
    for W in resample_blocks(n_tasks, B, settings.seed, block):
        rows = W.shape[0]
        if kept is not None and X is not None:
            Z = weighted_sums(W, X)
            for i in range(S):
                for m, name in enumerate(_SCALARS):
                    num, den = _SCALAR_AT[name]
                    kept[m, i, done : done + rows] = ratio(Z[i * width + num], Z[i * width + den])
            extra = kept_curve.replicates(W).reshape(S, len(_KEPT) - len(_SCALARS), rows)
            kept[len(_SCALARS) :, :, done : done + rows] = extra.transpose(1, 0, 2)
        if columns:
            out[:, done : done + rows] = curve.replicates(W)
        done += rows
    return kept, out


@attrs.frozen(slots=True)
class _Boot:
    """One dataset's bootstrap: the kept replicates (metric -> systems x B) and, per system and
    curve kind, every curve point's (interval, resamples left out)."""

    kept: Mapping[str, FloatArray]
    curves: Sequence[Mapping[str, Sequence[tuple[tuple[float, float] | None, int]]]]


def _bootstrap(
    systems: Sequence[_System], tasks: Sequence[str], settings: BootstrapSettings, k: int
) -> _Boot:
    """Every replicate from the dataset's one resample stream (BOOT-DRAW), drawn in bounded
    blocks (BOOT-BLOCK) and planned first (LB-MEMORY): each system's per-task sums
    (BOOT-CLUSTER, the kernel's ``task_sums``) and pass^k's task columns (PASSK-BOOT)."""
    from prefixexec.scale import available_memory

    plan = _plan(systems, len(tasks), settings.B, k, available_memory())
    X = np.concatenate([s.acc.task_sums(tasks).X[:, : len(_SCALAR_COLUMNS)] for s in systems], axis=1)
    curves: list[dict[str, list[tuple[tuple[float, float] | None, int]]]] = [
        {kind: [(None, 0)] * s.cap for kind in pk.KINDS} for s in systems
    ]
    kept_rows: FloatArray | None = None
    for number, points in enumerate(plan.passes):
        kept, rows = _draw(systems, tasks, settings, plan.block, X if number == 0 else None, points, k)
        if kept is not None:
            kept_rows = kept
        nan = np.isnan(rows)
        dropped = np.count_nonzero(nan, axis=1).tolist()
        found = percentile_intervals_rows(rows, settings.level, nan, overwrite=True)
        for (i, kind, j), ci, left_out in zip(points, found, dropped, strict=True):
            curves[i][kind][j - 1] = (ci, int(left_out))
        del rows, nan
    assert kept_rows is not None  # the first pass keeps them
    for kind in _KEPT[len(_SCALARS) :]:
        m = _KEPT.index(kind)
        rows = kept_rows[m]
        nan = np.isnan(rows)
        found = percentile_intervals_rows(rows, settings.level, nan)
        for i, (ci, left_out) in enumerate(zip(found, np.count_nonzero(nan, axis=1).tolist(), strict=True)):
            curves[i][kind][k - 1] = (ci, int(left_out))
    return _Boot(kept={m: kept_rows[j] for j, m in enumerate(_KEPT)}, curves=curves)


def _boot_of(
    systems: Sequence[_System], tasks: Sequence[str] | None, settings: BootstrapSettings, k: int
) -> _Boot:
    """The replicates of a dataset: paired (one draw over ``tasks``, :func:`_bootstrap`), or with
    ``tasks`` ``None`` unpaired: each system's own bounded draw over its own sorted tasks from the
    same seed, as ``score --unpaired`` draws (LB-UNPAIRED, BOOT-PAIRED, LB-MEMORY per system); the
    ranks of a resample then compare independent replicates."""
    if tasks is not None:
        return _bootstrap(systems, tasks, settings, k)
    own = [_bootstrap([s], s.acc.tasks, settings, k) for s in systems]
    kept = {m: np.concatenate([b.kept[m] for b in own]) for m in _KEPT}
    return _Boot(kept=kept, curves=[b.curves[0] for b in own])


def _curve_values(s: _System) -> dict[str, list[Fraction]]:
    ks = range(1, s.cap + 1)
    return {
        "pass_hat_k": [pk.pass_hat_k(s.n, s.c, k) for k in ks],
        "pass_at_k": [pk.pass_at_k(s.n, s.c, k) for k in ks],
        "ter_hat_k": [pk.ter_hat_k(s.n, s.e, k) for k in ks],
        "ter_at_k": [pk.ter_at_k(s.n, s.e, k) for k in ks],
    }


def _metric_rows(boot: _Boot, metric: str, k: int) -> FloatArray:
    """(systems x B) replicates of one ranked metric (at the leaderboard's k for pass^k, TER^k)."""
    return boot.kept[metric]


def _dataset(
    dataset: str,
    items: Sequence[tuple[ConditionKey, Accumulator]],
    settings: BootstrapSettings | None,
    options: LeaderboardOptions,
) -> dict[str, Any]:
    systems, tasks, task_info = _systems(dataset, items, options)
    caps = {s.label: s.cap for s in systems}
    common = min(caps.values())
    k = common if options.k is None else options.k
    if k > common:
        least = min(caps, key=lambda label: caps[label])
        raise InputError(
            "--k",
            f"{dataset}: k = {k} exceeds what every system allows: {common} ({least} has "
            f"{'a task with' if options.trials == 'tau2' else 'a run of'} {common} trial(s); PASSK-TRIALS)",
        )
    curves = [_curve_values(s) for s in systems]
    points = {m: [_point(s, m, k, c) for s, c in zip(systems, curves, strict=True)] for m in METRICS}
    boot = None if settings is None else _boot_of(systems, tasks, settings, k)
    entries = [
        _entry(s, points, curves[i], i, len(s.acc.tasks) if tasks is None else len(tasks), settings)
        for i, s in enumerate(systems)
    ]
    if boot is not None and settings is not None:
        _intervals(entries, boot, k, settings.level)
    level = 0.95 if settings is None else settings.level
    # At k = 1, pass^k and TER^k are the task-weighted success and TER (PASSK-K1): shown, not ranked.
    ranked = tuple(m for m in options.ranked if k > 1 or m not in ("pass_hat_k", "ter_hat_k"))
    rows = {m: None if boot is None else _metric_rows(boot, m, k) for m in ranked}
    for m in ranked:
        _ranks(entries, m, points[m], rows[m], level)
    kendall: list[dict[str, Any]] = []
    flips: list[dict[str, Any]] = []
    flipped_pairs: dict[str, int] = {}
    for m in ranked[1:]:
        tau, (total, flipped) = _compared(m, systems, points, rows, level)
        kendall.append(tau)
        flips += flipped
        flipped_pairs[m] = total
    order = sorted(range(len(systems)), key=lambda i: (-(points["success"][i] or 0), systems[i].label))
    return {
        "dataset": dataset,
        "k": k,
        "max_k": common,
        "tasks": {
            "scored": len(set().union(*(s.acc.tasks for s in systems))) if tasks is None else len(tasks),
            "paired": tasks is not None,
            **task_info,
        },
        "shown": list(options.ranked),
        "ranked": list(ranked),
        "systems": [entries[i] for i in order],
        "kendall": kendall,
        "flips": flips,
        "flipped_pairs": flipped_pairs,
    }


def _entry(
    s: _System,
    points: Mapping[str, Sequence[Fraction | None]],
    curves: Mapping[str, Sequence[Fraction]],
    i: int,
    tasks: int,
    settings: BootstrapSettings | None,
) -> dict[str, Any]:
    """One system's object (LB-JSON) with its point estimates; intervals and ranks come later."""
    metrics: dict[str, Any] = {
        m: {"value": approx(points[m][i]), "exact": exact(points[m][i])} for m in METRICS
    }
    if settings is not None:
        metrics["RR"]["ci_wilson"] = _pair(
            wilson_interval(s.metrics.recovered, s.metrics.RR_eligible, settings.level)
        )
    return {
        "system": s.label,
        "model": s.key.model,
        "method": s.key.method,
        "N": s.metrics.N,
        "tasks": tasks,
        "trials": {"min": min(s.n), "max": max(s.n), "run": s.run_trials, "max_k": s.cap},
        "RR_eligible": s.metrics.RR_eligible,
        "recovered": s.metrics.recovered,
        "metrics": metrics,
        "curves": {
            kind: [{"k": j + 1, "value": approx(v), "exact": exact(v)} for j, v in enumerate(values)]
            for kind, values in curves.items()
        },
    }


def _intervals(entries: list[dict[str, Any]], boot: _Boot, k: int, level: float) -> None:
    """PASSK-BOOT, BOOT-PERCENTILE: every metric's interval and its left-out count, in place."""
    for i, entry in enumerate(entries):
        rows = np.stack([boot.kept[m][i] for m in _SCALARS])
        nan = np.isnan(rows)
        dropped = np.count_nonzero(nan, axis=1).tolist()
        found = percentile_intervals_rows(rows, level, nan, overwrite=True)  # rows is a new array
        for j, m in enumerate(_SCALARS):
            entry["metrics"][m]["ci"] = _pair(found[j])
            entry["metrics"][m]["ci_dropped"] = int(dropped[j])
        # LB-CI: RR's interval is the signature's rr:wilson, as score's (a percentile interval of
        # a proportion of a few rollouts can be [0, 0]); the bootstrap's, which the ranks
        # resample, is kept as ci_bootstrap (ci_dropped counts its left-out resamples).
        rr = entry["metrics"]["RR"]
        rr["ci_bootstrap"], rr["ci"] = rr["ci"], rr["ci_wilson"]
        for kind in pk.KINDS:
            for point, (ci, left_out) in zip(entry["curves"][kind], boot.curves[i][kind], strict=True):
                point["ci"], point["ci_dropped"] = _pair(ci), left_out
        for m in ("pass_hat_k", "ter_hat_k"):
            entry["metrics"][m]["ci"] = entry["curves"][m][k - 1]["ci"]
            entry["metrics"][m]["ci_dropped"] = entry["curves"][m][k - 1]["ci_dropped"]


def _defined(values: Sequence[Fraction | None]) -> tuple[list[int], list[Fraction]]:
    """The systems whose point value is defined (CONV-UNDEFINED: RR without eligible rollouts)."""
    index = [i for i, v in enumerate(values) if v is not None]
    return index, [v for v in values if v is not None]


def _kept(rows: FloatArray, index: Sequence[int]) -> tuple[FloatArray, int]:
    """The resamples (B' x systems) in which every system of ``index`` is defined, and how many
    were left out (LB-RANK-CI, BOOT-DROP)."""
    block = rows[list(index)].T
    keep = ~np.isnan(block).any(axis=1)
    return block[keep], int(np.count_nonzero(~keep))


def _ranks(
    entries: list[dict[str, Any]],
    metric: str,
    values: Sequence[Fraction | None],
    rows: FloatArray | None,
    level: float,
) -> None:
    """LB-RANK and LB-RANK-CI for one metric, written into ``entries``."""
    index, defined = _defined(values)
    for entry in entries:
        entry["metrics"][metric]["rank"] = None
    for i, r in zip(index, exact_ranks(defined), strict=True):
        entries[i]["metrics"][metric]["rank"] = float(r)
    if rows is None:
        return
    for entry in entries:
        entry["metrics"][metric]["rank_ci"] = None
    if not index:
        return
    block, dropped = _kept(rows, index)
    found: list[tuple[float, float] | None] = [None] * len(index)
    if block.shape[0]:
        found = percentile_intervals_rows(np.ascontiguousarray(average_ranks(block).T), level)
    for col, i in enumerate(index):
        entries[i]["metrics"][metric]["rank_ci"] = _pair(found[col])
        entries[i]["metrics"][metric]["rank_ci_dropped"] = dropped


def _both(
    points: Mapping[str, Sequence[Fraction | None]], metric: str
) -> tuple[list[int], list[Fraction], list[Fraction]]:
    """The systems for which both success and ``metric`` are defined, with both values."""
    index = [
        i
        for i, (a, b) in enumerate(zip(points["success"], points[metric], strict=True))
        if a is not None and b is not None
    ]
    xs = [points["success"][i] for i in index]
    ys = [points[metric][i] for i in index]
    return index, [x for x in xs if x is not None], [y for y in ys if y is not None]


def _compared(
    metric: str,
    systems: Sequence[_System],
    points: Mapping[str, Sequence[Fraction | None]],
    rows: Mapping[str, FloatArray | None],
    level: float,
) -> tuple[dict[str, Any], tuple[int, list[dict[str, Any]]]]:
    """LB-KENDALL and LB-FLIPS of one metric against success."""
    index, xs, ys = _both(points, metric)
    counts = kendall_counts(_exact_ranks_dense(xs).reshape(1, -1), _exact_ranks_dense(ys).reshape(1, -1))
    success_rows, metric_rows = rows["success"], rows[metric]
    both = None if success_rows is None or metric_rows is None else (success_rows, metric_rows)
    return (
        _kendall(metric, index, counts, level, both),
        (int(counts.flipped[0]), _flips(metric, systems, index, xs, ys, both)),
    )


def _kendall(
    metric: str,
    index: Sequence[int],
    counts: KendallCounts,
    level: float,
    rows: tuple[FloatArray, FloatArray] | None,
) -> dict[str, Any]:
    """LB-KENDALL: tau-b between the success ranking and ``metric``'s, with its interval."""
    n_pairs = counts.pairs
    concordant, discordant = int(counts.concordant[0]), int(counts.discordant[0])
    ties_x, ties_y = int(counts.ties_x[0]), int(counts.ties_y[0])
    den = (n_pairs - ties_x) * (n_pairs - ties_y)
    value = None if den == 0 else (concordant - discordant) / float(np.sqrt(float(den)))
    out: dict[str, Any] = {
        "metric": metric,
        "systems": len(index),
        "pairs": n_pairs,
        "concordant": concordant,
        "discordant": discordant,
        "ties_success": ties_x,
        "ties_metric": ties_y,
        "tau_b": value,
    }
    if rows is None:
        return out
    x, y = rows[0][list(index)].T, rows[1][list(index)].T  # (B x systems)
    keep = ~(np.isnan(x).any(axis=1) | np.isnan(y).any(axis=1))  # every system defined (BOOT-DROP)
    x, y = x[keep], y[keep]
    taus = np.empty(x.shape[0], dtype=np.float64)
    step = max(1, _BLOCK_VALUES // max(len(index), 1))
    for start in range(0, x.shape[0], step):  # O(S log S) a resample, in bounded blocks
        taus[start : start + step] = kendall_counts(x[start : start + step], y[start : start + step]).tau_b()
    out["ci"] = _pair(percentile_intervals_rows(taus.reshape(1, -1), level)[0]) if taus.size else None
    out["ci_dropped"] = int(np.count_nonzero(~keep)) + int(np.count_nonzero(np.isnan(taus)))
    return out


def _shares(signs: FloatArray) -> dict[str, float]:
    """The share of resamples in which the first system is ahead, tied, the second ahead."""
    n = max(int(signs.shape[0]), 1)
    return {
        "first": int(np.count_nonzero(signs > 0)) / n,
        "tie": int(np.count_nonzero(signs == 0)) / n,
        "second": int(np.count_nonzero(signs < 0)) / n,
    }


_ORDER = {1: ">", 0: "=", -1: "<"}


#: LB-FLIPS: at most this many flipped pairs are listed per metric (all are counted).
MAX_FLIPS = 20


def _largest_flips(xs: Sequence[Fraction], ys: Sequence[Fraction]) -> list[tuple[int, int]]:
    """The :data:`MAX_FLIPS` flipped pairs (a < b) whose difference in x plus difference in y is
    largest, ties to the earlier pair, in pair order.

    The pairs are compared in numpy blocks of about a million (their orders from the exact dense
    ranks, their sizes in floating point); only a pair whose floating-point size comes within a
    rounding margin of the 20th largest exact size so far is measured exactly, so memory stays
    bounded and exact arithmetic is spent on the few contenders, not on every pair."""
    n = len(xs)
    if n < 2:
        return []
    rx, ry = _exact_ranks_dense(xs), _exact_ranks_dense(ys)
    fx = np.array([float(v) for v in xs])
    fy = np.array([float(v) for v in ys])
    # every float is within 2^-53 relative of its value; a size sums four of them
    margin = 2.0**-40 * (float(np.abs(fx).max()) + float(np.abs(fy).max())) + 1e-300
    best: list[tuple[Fraction, int, int]] = []  # min-heap of (size, -a, -b): the worst listed on top
    step = max(1, _BLOCK_VALUES // n)
    for start in range(0, n, step):
        a = np.arange(start, min(start + step, n))[:, None]
        b = np.arange(n)[None, :]
        flipped = (b > a) & (np.sign(rx[a] - rx[b]) != np.sign(ry[a] - ry[b]))
        if not flipped.any():
            continue
        size = np.where(flipped, np.abs(fx[a] - fx[b]) + np.abs(fy[a] - fy[b]), -np.inf)
        floor = -np.inf
        candidates = size[flipped]
        if candidates.shape[0] > MAX_FLIPS:
            floor = float(np.partition(candidates, -MAX_FLIPS)[-MAX_FLIPS])
        if len(best) == MAX_FLIPS:
            floor = max(floor, float(best[0][0]))
        for i, j in zip(*np.nonzero(flipped & (size >= floor - margin)), strict=True):  # pair order
            p, q = start + int(i), int(j)
            exact_size = abs(xs[p] - xs[q]) + abs(ys[p] - ys[q])
            if len(best) < MAX_FLIPS:
                heapq.heappush(best, (exact_size, -p, -q))
            elif exact_size > best[0][0]:  # a later pair of equal size comes after the listed ones
                heapq.heapreplace(best, (exact_size, -p, -q))
    return sorted((-p, -q) for _, p, q in best)


def _flips(
    metric: str,
    systems: Sequence[_System],
    index: Sequence[int],
    xs: Sequence[Fraction],
    ys: Sequence[Fraction],
    rows: tuple[FloatArray, FloatArray] | None,
) -> list[dict[str, Any]]:
    """LB-FLIPS: the :data:`MAX_FLIPS` largest pairs that success and ``metric`` order differently
    at the point estimates (HOSTILE-COUNT-COST: every pair of 300 systems was 5.1 MB of text;
    the largest are those whose two differences sum highest; :func:`kendall_counts` counts them
    all), with their resample shares."""
    found: list[dict[str, Any]] = []
    for a, b in _largest_flips(xs, ys):
        sx, sy = _sign(xs[a], xs[b]), _sign(ys[a], ys[b])
        # The first system is the one success puts ahead (on a success tie, the one the
        # metric puts ahead), so "first > second" reads as the success order.
        first, second = (a, b) if (sx > 0 or (sx == 0 and sy > 0)) else (b, a)
        flip = 1 if first == a else -1
        entry: dict[str, Any] = {
            "metric": metric,
            "first": systems[index[first]].label,
            "second": systems[index[second]].label,
            "success_order": _ORDER[sx * flip],
            "metric_order": _ORDER[sy * flip],
        }
        if rows is not None:
            s_all = np.sign(rows[0][index[first]] - rows[0][index[second]])
            m_all = np.sign(rows[1][index[first]] - rows[1][index[second]])
            keep = ~(np.isnan(s_all) | np.isnan(m_all))  # all four replicates defined
            s_sign, m_sign = s_all[keep], m_all[keep]
            n = max(int(s_sign.shape[0]), 1)
            entry["resamples"] = {
                "success": _shares(s_sign),
                "metric": _shares(m_sign),
                "differ": int(np.count_nonzero(s_sign != m_sign)) / n,
                "used": int(s_sign.shape[0]),
                "dropped": int(np.count_nonzero(~keep)),
            }
        found.append(entry)
    return found


# ---------------------------------------------------------------------------------- document


def document_head(
    settings: BootstrapSettings | None, options: LeaderboardOptions, signature: str
) -> dict[str, Any]:
    """The keys of an LB-JSON document before its datasets: format, version, signature, spec IDs
    and the settings it was ranked with."""
    return {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "signature": signature,
        "spec": dict(SPEC_IDS),
        "settings": {
            "by": options.by,
            "metrics": list(options.ranked),
            "k": options.k,
            "trials": options.trials,
            "shared_tasks": options.shared_tasks,
            "bootstrap": 0 if settings is None else settings.B,
            "seed": None if settings is None else settings.seed,
            "level": None if settings is None else settings.level,
        },
    }


def leaderboard_document(
    accumulators: AccumulatorSet,
    settings: BootstrapSettings | None,
    options: LeaderboardOptions,
    signature: str,
    skip_unshared: bool = False,
) -> dict[str, Any]:
    """The ``leaderboard --json`` document (LB-JSON): one leaderboard per dataset, in order.

    ``skip_unshared`` (the report's leaderboard, LB-REPORT): a dataset whose systems share no
    task is listed under ``skipped`` with the reason instead of being an error.
    """
    by_dataset: dict[str, list[tuple[ConditionKey, Accumulator]]] = {}
    for key, acc in accumulators.items:
        by_dataset.setdefault(key.dataset, []).append((key, acc))
    if not by_dataset:
        raise InputError("input", "no rollouts to rank")
    datasets: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for name, items in sorted(by_dataset.items()):
        if skip_unshared and not set.intersection(*(set(acc.tasks) for _, acc in items)):
            skipped.append({"dataset": name, "reason": "its systems share no task"})
            continue
        datasets.append(_dataset(name, items, settings, options))
    return {
        **document_head(settings, options, signature),
        "datasets": datasets,
        **({"skipped": skipped} if skip_unshared else {}),
    }
