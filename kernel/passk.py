"""Reliability over repeated trials: pass^k, pass@k and their prefix analogues (spec: PASSK-*).

For task j with ``n_j`` trials of which ``c_j`` succeed (spec/passk.md):

* PASSK-HAT, pass^k (tau-bench, Yao et al. 2024, arXiv:2406.12045, Eq. 1):
  ``pass^k = (1/m) sum_j C(c_j, k) / C(n_j, k)``, the chance that k trials drawn without
  replacement from a task's n_j all succeed, averaged over the m tasks with equal weight;
* PASSK-AT, pass@k (Chen et al. 2021, the unbiased estimator):
  ``pass@k = (1/m) sum_j (1 - C(n_j - c_j, k) / C(n_j, k))``, the chance that at least one does;
* PASSK-TER, TER^k and TER@k: the same with ``c_j`` the number of fully executable trials of
  task j (FED = T + 1, the event of Eq. (8)): all k (at least one of k) sampled trials ran
  without a single rejected tool call.

Values are exact :class:`fractions.Fraction` (CONV-EXACT). ``n`` is what the caller passes:
PASSK-TRIALS fixes it from the rollouts under either benchmark's convention
(:func:`trials_per_task`). The bootstrap replicates (PASSK-BOOT) are ratios of two weighted
integer sums like every other metric's, from the resample counts W of BOOT-DRAW.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import attrs
import numpy as np
import numpy.typing as npt

from .bootstrap import IntArray, _ratio, weighted_sums

FloatArray = npt.NDArray[np.float64]

#: PASSK-TRIALS: how a task's n is found. ``tau2``: the number of its own (evaluated) trials, and
#: k at most the smallest of them (tau2-bench ``src/tau2/metrics/agent_metrics.py``,
#: ``get_metrics_df`` / ``pass_hat_k``); ``run``: the number of distinct trial numbers of the
#: whole run, for every task (tau-bench v1 ``tau_bench/run.py``, ``display_metrics``).
Convention = Literal["tau2", "run"]
CONVENTIONS: tuple[Convention, ...] = ("tau2", "run")

#: The four reliability metrics, as named in the JSON output (LB-JSON).
KINDS = ("pass_hat_k", "pass_at_k", "ter_hat_k", "ter_at_k")


def _checked(n: Sequence[int], c: Sequence[int], k: int) -> tuple[IntArray, IntArray]:
    """The per-task counts as int64 arrays, after checking them (ValueError naming the task)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"'k' must be an integer >= 1: {k!r}")
    ns = np.asarray(n, dtype=np.int64).reshape(-1)
    cs = np.asarray(c, dtype=np.int64).reshape(-1)
    if ns.shape[0] != cs.shape[0]:
        raise ValueError(f"'n' has {ns.shape[0]} tasks, 'c' has {cs.shape[0]}")
    if ns.shape[0] == 0:
        raise ValueError("pass^k needs at least one task")
    bad = (cs < 0) | (cs > ns)
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(f"task {j}: 'c' must be in [0, n] = [0, {int(ns[j])}]: {int(cs[j])}")
    if int(ns.min()) < k:
        j = int(np.argmax(ns < k))
        raise ValueError(f"task {j}: number of trials {int(ns[j])} is less than k {k}")
    return ns, cs


def task_pass_hat_k(n: Sequence[int], c: Sequence[int], k: int) -> tuple[Fraction, ...]:
    """PASSK-HAT per task: ``C(c_j, k) / C(n_j, k)`` (``math.comb``: 0 when c_j < k)."""
    ns, cs = _checked(n, c, k)
    return tuple(
        Fraction(math.comb(cj, k), math.comb(nj, k)) for nj, cj in zip(ns.tolist(), cs.tolist(), strict=True)
    )


def pass_hat_k(n: Sequence[int], c: Sequence[int], k: int) -> Fraction:
    """PASSK-HAT: pass^k = (1/m) sum_j C(c_j, k) / C(n_j, k) over the m tasks.

    ``n[j]`` trials and ``c[j]`` successes of task j; k <= every n_j (ValueError otherwise, as
    tau2's ``pass_hat_k`` raises). pass^1 is the mean over tasks of c_j / n_j, which is the
    success rate when every task has the same number of trials (PASSK-K1).
    """
    num, den = task_columns(n, c, k, False)
    return _mean(num, den)


def task_pass_at_k(n: Sequence[int], c: Sequence[int], k: int) -> tuple[Fraction, ...]:
    """PASSK-AT per task: ``1 - C(n_j - c_j, k) / C(n_j, k)``."""
    ns, cs = _checked(n, c, k)
    return tuple(
        1 - Fraction(math.comb(nj - cj, k), math.comb(nj, k))
        for nj, cj in zip(ns.tolist(), cs.tolist(), strict=True)
    )


def pass_at_k(n: Sequence[int], c: Sequence[int], k: int) -> Fraction:
    """PASSK-AT: pass@k = (1/m) sum_j (1 - C(n_j - c_j, k) / C(n_j, k)); pass@1 = pass^1."""
    num, den = task_columns(n, c, k, True)
    return _mean(num, den)


def _mean(num: Any, den: Any) -> Fraction:
    """sum_j num_j / sum_j den_j exactly: the task mean of :func:`task_columns`' values (every
    den_j is the same L, so this is (1/m) sum_j num_j / L)."""
    L, m = int(den[0]), int(den.shape[0])
    if num.dtype == np.int64 and L * m < 2**62:  # the sum cannot overflow int64
        return Fraction(int(num.sum()), L * m)
    return Fraction(sum(int(x) for x in num), L * m)


def ter_hat_k(n: Sequence[int], e: Sequence[int], k: int) -> Fraction:
    """PASSK-TER: TER^k = pass^k of the fully executable trials (``e[j]`` of task j's n_j):
    the chance that k trials drawn from a task are all executable to their end."""
    return pass_hat_k(n, e, k)


def ter_at_k(n: Sequence[int], e: Sequence[int], k: int) -> Fraction:
    """PASSK-TER: TER@k = pass@k of the fully executable trials: at least one of k is."""
    return pass_at_k(n, e, k)


def max_k(n: Sequence[int]) -> int:
    """The largest k defined for every task: the smallest trial count (tau2's cap on k)."""
    if not n:
        raise ValueError("pass^k needs at least one task")
    return min(int(x) for x in n)


def trials_per_task(counts: Sequence[int], run_trials: int, convention: Convention) -> tuple[int, ...]:
    """PASSK-TRIALS: each task's n under ``convention``.

    ``counts[j]``: the trials of task j present in the input (rollouts a harness-error rule
    excluded are simply absent); ``run_trials``: the number of distinct trial numbers of the
    whole run. ``tau2``: n_j = counts[j]; ``run`` (tau-bench v1): n_j = run_trials for every
    task, so a task with fewer trials counts its missing ones as failures.
    """
    if convention == "tau2":
        return tuple(int(x) for x in counts)
    if convention == "run":
        if any(int(x) > run_trials for x in counts):
            raise ValueError(f"a task has more trials than the run's {run_trials} distinct trial numbers")
        return tuple(run_trials for _ in counts)
    raise ValueError(f"'convention' must be one of {', '.join(CONVENTIONS)}: {convention!r}")


# ---------------------------------------------------------------------------------------------
# Bootstrap (PASSK-BOOT)


def task_columns(n: Sequence[int], c: Sequence[int], k: int, at_least_one: bool) -> tuple[Any, Any]:
    """Integer numerator and denominator per task whose weighted ratio is pass^k (pass@k).

    With ``L = lcm_j C(n_j, k)``: numerator_j = ``C(c_j, k) L / C(n_j, k)`` (pass@k:
    ``(C(n_j, k) - C(n_j - c_j, k)) L / C(n_j, k)``), denominator_j = ``L``; so
    ``sum_j W_j num_j / sum_j W_j den_j`` is the W-weighted mean of the per-task values, and with
    W = 1 it is :func:`pass_hat_k` (:func:`pass_at_k`) exactly. int64 arrays while every value
    fits, else object arrays of Python integers.
    """
    ns, cs = _checked(n, c, k)
    # C(a, k) only for the a that occur (n_j, and c_j or n_j - c_j), each once: a table of every
    # a up to the largest n cost n binomials per k, n^3 over a leaderboard's curve (HOSTILE-COUNT-COST).
    others = ns - cs if at_least_one else cs
    comb = {a: math.comb(a, k) for a in np.unique(np.concatenate([ns, others])).tolist()}
    L = math.lcm(*(comb[a] for a in np.unique(ns).tolist()))
    dtype: type = np.int64 if L < 2**62 else object
    totals: npt.NDArray[Any] = np.array([comb[a] for a in ns.tolist()], dtype=dtype)
    rest: npt.NDArray[Any] = np.array([comb[a] for a in others.tolist()], dtype=dtype)
    hits = totals - rest if at_least_one else rest
    num = hits * (L // totals)
    return num, np.full(ns.shape[0], L, dtype=dtype)


def replicates(W: IntArray, columns: Sequence[tuple[Any, Any]], Z: Any = None) -> FloatArray:
    """PASSK-BOOT: for each ``(num, den)`` of :func:`task_columns`, the B replicates
    ``(W @ num) / (W @ den)``, each exact and rounded once (BOOT-REPLICATE), as one row of the
    result (columns x B), from the resample counts ``W`` (B x tasks, BOOT-DRAW; a drawn task
    brings all its trials, BOOT-CLUSTER).

    Every ``den`` is one L repeated, so ``W @ den`` is L times the tasks drawn; only the
    numerators go through the product. ``Z``: their weighted sums (columns x B, as
    :func:`~.bootstrap.weighted_sums` lays them out) when the caller took them in a larger product.
    """
    if not columns:
        return np.zeros((0, W.shape[0]), dtype=np.float64)
    if Z is None:
        Z = weighted_sums(W, np.column_stack([num for num, _ in columns]))
    drawn = W.sum(axis=1)
    dens: dict[int, Any] = {}
    rows = []
    for i, (_, den) in enumerate(columns):
        L = int(den[0])
        if L not in dens:  # exact: float64 below 2^53, Python integers beyond
            exact_float = L * int(W.shape[1]) < 2**53
            dens[L] = (
                drawn.astype(np.float64) * L
                if exact_float
                else np.array([int(d) * L for d in drawn], dtype=object)
            )
        rows.append(_ratio(Z[i], dens[L]))
    return np.stack(rows)


# ---------------------------------------------------------------------------------------------
# The fixed-point fast path for wide columns (PASSK-BOOT-FIXED)
#
# A wide column (numerators num_j over one L with n L >= 2^53, Python integers when L >= 2^62)
# has its replicates sum_j W[b, j] num_j / (D_b L) (D_b = sum_j W[b, j], the tasks drawn) exact
# in Python integers (:func:`replicates`: an object-dtype product, then one int / int per
# replicate), about ten times slower than what follows on a leaderboard's curve. The same
# doubles come from a fixed-point image of the column:
#
# 1. Once per column: a_j = floor(num_j 2^M / L), an exact integer, with M so large that every
#    nonzero a_j has at least KEEP_BITS bits below its leading limb; a_j is split into limbs of
#    ``shift`` bits (D_b (2^shift - 1) < 2^53), stored as float64 (F).
# 2. Per block of resamples: P = W @ F, one BLAS float64 product, exact (every partial sum is an
#    integer below 2^53). A_b = sum_l P[b, l] 2^(shift l) = sum_j W[b, j] a_j, and the true
#    numerator sum_j W[b, j] num_j 2^M / L lies in [A_b, A_b + D_b).
# 3. From the T leading limbs of A_b (the limbs below them and the D_b add less than
#    D_b 2^(shift (h - T + 1)), h the leading limb) the replicate is approximated in double-double
#    arithmetic (error-free TwoSum and Dekker's TwoProduct: numpy has no fma), with a rigorous
#    bound on the distance to the exact replicate.
# 4. The nearest double y of the approximation is the replicate when the whole interval around
#    the approximation rounds to y: it stays strictly inside the half-spacings to y's neighbours
#    (the spacing below a power of two is half the spacing above). A replicate for which this is
#    not proven (at or next to a midpoint between two doubles, or too small for a normal double)
#    is computed exactly from the Python integers, alone. 0 (nothing drawn is nonzero) is exact.

#: Bits below the leading limb that the approximation keeps (the rest is bounded, not dropped).
KEEP_BITS = 90
#: Below this the fast path does not certify (subnormal results and their neighbours go exact).
_SMALLEST_SURE = 2.0**-960
#: Relative error of the double-double steps (they stay below 2^-100; 16 times that as margin).
_DD_ERROR = 2.0**-96
#: Absolute slack for results of ldexp that fall below the normal range (at most 2^-1075 each).
_TINY = 2.0**-1060
#: Dekker's splitter for float64: 2^27 + 1.
_SPLITTER = 134217729.0


def _two_sum(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Knuth's TwoSum: s = fl(a + b) and e with a + b = s + e exactly."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _fast_two_sum(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Dekker's FastTwoSum (|a| >= |b| or a = 0): s = fl(a + b), a + b = s + e exactly."""
    s = a + b
    return s, b - (s - a)


def _split(a: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Dekker's split: a = hi + lo with hi, lo of at most 26 significant bits each."""
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def _two_product(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Dekker's TwoProduct: p = fl(a b) and e with a b = p + e exactly (no overflow, no underflow)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _limb_shift(n_tasks: int) -> int:
    """Bits a limb may have so that n_tasks x (2^shift - 1) < 2^53, at most 47 (a resample of up
    to 64 draws then still sums exactly); 0 when n_tasks >= 2^23: the fast path is then not used
    (limbs of fewer than 30 bits would need more leading limbs than the rounding step takes)."""
    shift = (((2**53 - 1) // max(1, n_tasks)) + 1).bit_length() - 1
    return min(shift, 47) if shift >= 30 else 0


@attrs.frozen(slots=True, eq=False)
class FixedColumn:
    """PASSK-BOOT-FIXED: one wide column's fixed-point limbs and its exact numerators.

    ``a_j = floor(num_j 2^M / L) = sum_l limbs[j, l] 2^(shift l)``, every limb below 2^shift.
    """

    nums: tuple[int, ...]
    L: int
    M: int
    limbs: FloatArray  # n_tasks x K


def fixed_column(num: npt.NDArray[Any], L: int, shift: int) -> FixedColumn:
    """The :class:`FixedColumn` of non-negative numerators ``num`` over ``L``, limbs of ``shift`` bits.

    M is chosen so that the smallest nonzero a_j is at least 2^(shift (T - 1)) (T =
    :func:`_leading_limbs`): every nonzero sum then has T limbs from its leading one down.
    """
    nums = tuple(int(v) for v in num.tolist())
    nonzero = [v for v in nums if v]
    keep = shift * (_leading_limbs(shift) - 1)
    # num_j >= 2^(bits(num_j) - 1) and L < 2^bits(L): num_j 2^M / L > 2^keep for this M.
    M = keep + 1 + L.bit_length() - min(v.bit_length() for v in nonzero) if nonzero else 0
    a = [(v << M) // L for v in nums]
    K = max(1, -(-max(a).bit_length() // shift))
    mask = (1 << shift) - 1
    limbs = np.array([[(v >> (shift * limb)) & mask for limb in range(K)] for v in a], dtype=np.float64)
    limbs.flags.writeable = False
    return FixedColumn(nums, L, M, limbs.reshape(len(nums), K))


def _leading_limbs(shift: int) -> int:
    """T: the limbs taken from the leading one down, enough for KEEP_BITS bits below it."""
    return 1 + -(-KEEP_BITS // shift)


def _exact_replicate(w: Sequence[int], nums: Sequence[int], L: int) -> float:
    """One replicate the Python-integer way: sum_j w_j num_j / (sum_j w_j L), rounded once
    (CPython's integer true division rounds correctly, ties to even); NaN when nothing is drawn."""
    drawn = sum(w)
    if drawn == 0:
        return math.nan
    return sum(wj * v for wj, v in zip(w, nums, strict=True) if wj) / (drawn * L)


def fixed_replicates(
    P: FloatArray, D: FloatArray, M: IntArray, shift: int
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """PASSK-BOOT-FIXED steps 3 and 4 for C columns of K limbs each: from their limb sums ``P``
    (B x C x K, exact integers), the tasks drawn ``D`` (B, exact integers, > 0 where a row has a
    nonzero limb) and each column's scale ``M`` (C), the candidate doubles (B x C) and where they
    are proven to be the exact replicate rounded once."""
    K = P.shape[2]
    T = _leading_limbs(shift)
    nonzero = P > 0
    found = nonzero.any(axis=2)
    h = (K - 1) - np.argmax(nonzero[:, :, ::-1], axis=2)  # the leading limb (0 where none)
    at = h[:, :, None] - np.arange(T)
    Q = np.take_along_axis(P, np.maximum(at, 0), axis=2) * (at >= 0)
    # s = sum_i Q_i 2^(-shift i): each term is an exact double; TwoSum keeps every rounding error.
    hi = Q[:, :, 0]
    lo = np.zeros(hi.shape)
    for i in range(1, T):
        hi, err = _two_sum(hi, np.ldexp(Q[:, :, i], -shift * i))
        lo += err
    hi, lo = _fast_two_sum(hi, lo)
    # q = s / D in double-double: q_hi = fl(hi / D), the remainder hi - q_hi D exactly
    # (TwoProduct; hi - p is exact by Sterbenz), then the low part.
    Dn = np.where(found, D[:, None], 1.0)
    q = hi / Dn
    p, pe = _two_product(q, Dn)
    ql = (((hi - p) - pe) + lo) / Dn
    q, ql = _fast_two_sum(q, ql)
    # The replicate is 2^e (s + tau) / D with 0 <= tau < D 2^(-shift (T - 1)), e = shift h - M.
    e = shift * h - M[None, :]
    y = np.ldexp(q, e)
    yl = np.ldexp(ql, e)
    tail = np.ldexp(1.0, e - shift * (T - 1))  # bounds 2^e tau / D
    error = y * _DD_ERROR + tail + _TINY  # |exact - (y + yl)| is below this (one side is tail only)
    up = np.nextafter(y, np.inf) - y
    down = y - np.nextafter(y, 0.0)
    half = np.where(yl >= 0, up, down) * 0.5  # the half-spacing on yl's side
    least = np.minimum(up, down) * 0.5
    margin = 1.0 - 2.0**-40  # covers the roundings of the two comparisons' left sides (< 2^-50)
    sure = (y >= _SMALLEST_SURE) & (np.abs(yl) + error < half * margin) & (error < least * margin)
    # Nothing nonzero drawn: exactly 0 (or nothing drawn at all: NaN, BOOT-DROP).
    y = np.where(found, y, np.where(D[:, None] > 0, 0.0, np.nan))
    return y, sure | ~found


@attrs.frozen(slots=True, eq=False)
class PreparedColumns:
    """PASSK-BOOT columns made ready once for many blocks of resample counts: narrow columns
    (every sum below 2^53) take :func:`replicates`' float64 product, wide ones the fixed-point
    path of PASSK-BOOT-FIXED (:class:`FixedColumn`). Rows of the result in ``columns``' order.

    The wide columns are grouped by their number of limbs K (``groups``: the output rows of each
    group, in the order their limbs lie side by side in ``F``), so that a group is rounded in one
    vectorised step."""

    narrow: tuple[int, ...]
    narrow_columns: tuple[tuple[Any, Any], ...]
    groups: tuple[tuple[int, ...], ...]
    fixed: tuple[tuple[FixedColumn, ...], ...]
    F: FloatArray  # every wide column's limbs side by side (n_tasks x sum K), group by group
    shift: int

    def replicates(self, W: IntArray) -> FloatArray:
        """The replicates (columns x W's rows), each the exact ratio rounded once (BOOT-REPLICATE)."""
        wide = sum(len(g) for g in self.groups)
        out = np.empty((len(self.narrow) + wide, W.shape[0]), dtype=np.float64)
        if self.narrow:
            out[list(self.narrow)] = replicates(W, self.narrow_columns)
        if not wide or W.shape[0] == 0:
            return out
        drawn = W.sum(axis=1)
        # A row's limb sums are exact integers in float64 when it draws at most this many tasks
        # (D (2^shift - 1) < 2^53); a resample of BOOT-DRAW draws n_tasks, always within it.
        most = (2**53 - 1) // ((1 << self.shift) - 1) if self.shift > 0 else -1
        exact_rows = (drawn > most) | (W < 0).any(axis=1)
        Wf = W.astype(np.float64)
        Wf[exact_rows] = 0.0
        P = Wf @ self.F  # exact: every partial sum is an integer below 2^53
        D = np.where(exact_rows, 0.0, drawn.astype(np.float64))
        # Columns a step: about FIXED_STEP replicates, so that the temporaries stay in the cache.
        step = max(1, FIXED_STEP // W.shape[0])
        start = 0
        for group_rows, group in zip(self.groups, self.fixed, strict=True):
            K = group[0].limbs.shape[1]
            for first in range(0, len(group), step):
                cols, rows = group[first : first + step], group_rows[first : first + step]
                M = np.array([col.M for col in cols], dtype=np.int64)
                part = P[:, start : start + len(cols) * K].reshape(-1, len(cols), K)
                start += len(cols) * K
                y, sure = fixed_replicates(part, D, M, self.shift)
                # Rare: at or next to a midpoint, or tiny; or a row drawing too many tasks.
                for b, c in np.argwhere(~sure | exact_rows[:, None]).tolist():
                    y[b, c] = _exact_replicate(W[b].tolist(), cols[c].nums, cols[c].L)
                out[list(rows)] = y.T
        return out


def prepare_columns(columns: Sequence[tuple[Any, Any]], n_tasks: int) -> PreparedColumns:
    """:class:`PreparedColumns` of :func:`task_columns`' ``(num, den)`` over ``n_tasks`` tasks."""
    shift = _limb_shift(n_tasks)
    narrow = []
    by_limbs: dict[int, list[tuple[int, FixedColumn]]] = {}
    for i, (num, den) in enumerate(columns):
        L = int(den[0]) if den.shape[0] else 1
        if num.dtype != object and L * n_tasks < 2**53:
            narrow.append(i)
        else:
            col = fixed_column(num, L, shift or 30)
            by_limbs.setdefault(col.limbs.shape[1], []).append((i, col))
    groups = tuple(tuple(i for i, _ in by_limbs[K]) for K in sorted(by_limbs))
    fixed = tuple(tuple(col for _, col in by_limbs[K]) for K in sorted(by_limbs))
    limbs = [col.limbs for group in fixed for col in group]
    F = np.concatenate(limbs, axis=1) if limbs else np.zeros((n_tasks, 0), dtype=np.float64)
    F.flags.writeable = False
    return PreparedColumns(tuple(narrow), tuple(columns[i] for i in narrow), groups, fixed, F, shift)


#: Replicates rounded in one vectorised step of :meth:`PreparedColumns.replicates` (at least one
#: column of a block's rows).
FIXED_STEP = 1 << 15


def fixed_temp_bytes(K: int, rows: int) -> int:
    """LB-MEMORY's estimate: the bytes :func:`fixed_replicates`' temporaries take at most for a
    block of ``rows`` resamples and columns of at most ``K`` limbs: per replicate of a step, the
    copy of its limb sums and their mask (9 K) and at most 64 arrays of one double each."""
    return (9 * K + 64 * 8) * max(FIXED_STEP, rows)


def fixed_limbs(top: int, n_tasks: int) -> int:
    """LB-MEMORY's estimate: limbs of a wide column whose smallest nonzero value is at least
    ``2^-top`` (pass^k, pass@k: top = bits of the largest C(n_j, k)), at most."""
    shift = _limb_shift(n_tasks) or 30
    return -(-(shift * (_leading_limbs(shift) - 1) + top + 3) // shift)


__all__ = [
    "CONVENTIONS",
    "KINDS",
    "Convention",
    "max_k",
    "pass_at_k",
    "pass_hat_k",
    "replicates",
    "task_columns",
    "task_pass_at_k",
    "task_pass_hat_k",
    "ter_at_k",
    "ter_hat_k",
    "trials_per_task",
]
