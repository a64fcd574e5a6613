"""The paper's estimators, one function per equation (section 2.2, Eq. (3)-(12)).

Every function takes the per-rollout arrays of one cohort (``T``, ``fed``, ``Y``; index i is
the rollout) and returns exact values: counts as ``int`` and ratios as
:class:`fractions.Fraction`; ``None`` where the paper leaves the value undefined
(CONV-UNDEFINED). Floats are for display only (CONV-EXACT). Inputs are never mutated.
"""

from __future__ import annotations

from fractions import Fraction

import attrs
import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _n(fed: IntArray) -> int:
    return int(fed.shape[0])


def survival_counts(T: IntArray, fed: IntArray) -> IntArray:
    """#{i : FED_i > k} for k = 1..max T, as exact integers (numerators of Eq. (4)).

    Computed from the histogram of FED in O(N + max T).
    """
    max_t = int(T.max())
    histogram = np.bincount(fed, minlength=max_t + 2).astype(np.int64)
    # cumulative[k] = #{FED <= k}; survivors at k = N - #{FED <= k}
    cumulative = np.cumsum(histogram)
    return (_n(fed) - cumulative[1 : max_t + 1]).astype(np.int64)


def eligible_counts(T: IntArray) -> IntArray:
    """n_k = #{i : T_i >= k} for k = 1..max T (Eq. (5))."""
    max_t = int(T.max())
    histogram = np.bincount(T, minlength=max_t + 1).astype(np.int64)
    # n_k = N - #{T < k} = N - #{T <= k-1}
    cumulative = np.cumsum(histogram)
    return (int(T.shape[0]) - cumulative[0:max_t]).astype(np.int64)


def pec(fed: IntArray, k: int) -> Fraction:
    """Eq. (4): PEC^(k) = (1/N) sum_i 1{FED_i > k}  (the fixed-cohort survival curve, Eq. (3)).

    The denominator is always N, whatever the horizons (CONV-FIXED-COHORT, CONV-NO-CENSORING).
    """
    return Fraction(int(np.count_nonzero(fed > k)), _n(fed))


def pec_curve(T: IntArray, fed: IntArray) -> tuple[Fraction, ...]:
    """Eq. (4) at every depth k = 1..max T (CONV-PEC-RANGE)."""
    n = _n(fed)
    return tuple(Fraction(int(c), n) for c in survival_counts(T, fed))


def n_k(T: IntArray, k: int) -> int:
    """Eq. (5): n_k = sum_i 1{T_i >= k}, the eligible-set size at depth k."""
    return int(np.count_nonzero(T >= k))


def pec_elig(T: IntArray, fed: IntArray, k: int) -> Fraction | None:
    """Eq. (6): PEC_elig^(k) = (1/n_k) sum_i 1{T_i >= k and FED_i > k}; undefined if n_k = 0."""
    eligible = n_k(T, k)
    if eligible == 0:
        return None
    return Fraction(int(np.count_nonzero((T >= k) & (fed > k))), eligible)


def pec_elig_curve(T: IntArray, fed: IntArray) -> tuple[Fraction | None, ...]:
    """Eq. (6) at every depth k = 1..max T (``None`` where n_k = 0)."""
    # FED_i > k implies T_i + 1 > k, i.e. T_i >= k: the numerator equals Eq. (4)'s.
    return tuple(
        None if int(m) == 0 else Fraction(int(c), int(m))
        for c, m in zip(survival_counts(T, fed), eligible_counts(T), strict=True)
    )


def fully_executable(T: IntArray, fed: IntArray) -> BoolArray:
    """1{FED_i = T_i + 1}: rollout i is executable to its end (the event of Eq. (8))."""
    result: BoolArray = fed == T + 1
    return result


def ter(T: IntArray, fed: IntArray) -> Fraction:
    """Eq. (8): TER^ = (1/N) sum_i 1{FED_i = T_i + 1}."""
    return Fraction(int(np.count_nonzero(fully_executable(T, fed))), _n(fed))


def rr_eligible(T: IntArray, fed: IntArray) -> int:
    """Denominator of Eq. (9): RR-Eligible = sum_i 1{FED_i <= T_i}."""
    return int(np.count_nonzero(fed <= T))


def recovered(T: IntArray, fed: IntArray, Y: BoolArray) -> int:
    """Numerator of Eq. (9): sum_i 1{Y_i = 1} 1{FED_i <= T_i}."""
    return int(np.count_nonzero(Y & (fed <= T)))


def rr(T: IntArray, fed: IntArray, Y: BoolArray) -> Fraction | None:
    """Eq. (9): RR^ = sum_i 1{Y_i=1} 1{FED_i<=T_i} / sum_i 1{FED_i<=T_i}; undefined if 0 eligible."""
    eligible = rr_eligible(T, fed)
    if eligible == 0:
        return None
    return Fraction(recovered(T, fed, Y), eligible)


def auc_pec(T: IntArray, fed: IntArray) -> Fraction:
    """Eq. (11): AUC-PEC^ = (1/N) sum_i (FED_i - 1) / T_i  (the right-hand form of Eq. (10)).

    Exact: the terms are grouped by horizon, sum_t (sum_{i: T_i = t} (FED_i - 1)) / t.
    """
    horizons, inverse = np.unique(T, return_inverse=True)
    sums = np.zeros(horizons.shape[0], dtype=np.int64)
    np.add.at(sums, inverse.reshape(-1), fed - 1)
    total = sum((Fraction(int(s), int(t)) for s, t in zip(sums, horizons, strict=True)), Fraction(0))
    return total / _n(fed)


def auc_pec_area(T: IntArray, fed: IntArray) -> Fraction:
    """Eq. (10), left-hand form: (1/N) sum_i (1/T_i) sum_{k=1..T_i} 1{FED_i > k}.

    The horizon-normalised area under each rollout's prefix-survival profile, summed depth by
    depth (O(sum T)); equal to :func:`auc_pec` (INV-AUC-FORMS).
    """
    total = Fraction(0)
    for t, f in zip(T.tolist(), fed.tolist(), strict=True):
        total += Fraction(sum(1 for k in range(1, t + 1) if f > k), t)
    return total / _n(fed)


def mean_fed(fed: IntArray) -> Fraction:
    """Mean first-error depth, (1/N) sum_i FED_i (FED_i = T_i + 1 for executable rollouts)."""
    return Fraction(int(fed.sum()), _n(fed))


def success(Y: BoolArray) -> Fraction:
    """Final task success rate, (1/N) sum_i Y_i (the benchmark's own Y)."""
    return Fraction(int(np.count_nonzero(Y)), int(Y.shape[0]))


@attrs.frozen(slots=True)
class Decomposition:
    """Eq. (12): q = TER, s = Pr(Y=1 | FED = T+1), r = RR; success = q s + (1 - q) r.

    ``s`` is undefined when no rollout is fully executable, ``r`` when every rollout is.
    ``uninterrupted`` counts successes of fully executable rollouts and ``recovered``
    successes after a first failure; together they are all successes.
    """

    q: Fraction
    s: Fraction | None
    r: Fraction | None
    uninterrupted: int
    recovered: int
    fully_executable: int
    rr_eligible: int


def decomposition(T: IntArray, fed: IntArray, Y: BoolArray) -> Decomposition:
    """Eq. (12): Pr(Y=1) = q s + (1 - q) r for 0 < q < 1, with its exact ingredients."""
    full = fully_executable(T, fed)
    n_full = int(np.count_nonzero(full))
    uninterrupted = int(np.count_nonzero(Y & full))
    return Decomposition(
        q=ter(T, fed),
        s=None if n_full == 0 else Fraction(uninterrupted, n_full),
        r=rr(T, fed, Y),
        uninterrupted=uninterrupted,
        recovered=recovered(T, fed, Y),
        fully_executable=n_full,
        rr_eligible=rr_eligible(T, fed),
    )


def label_counts(label_code: IntArray) -> tuple[int, ...]:
    """First-failure label counts in tie-break order, then unlabelled (section 2.4, MET-LABELS).

    ``label_code`` is -1 for fully executable rollouts, which are not counted; the counts sum
    to RR-Eligible (INV-LABEL-SUM).
    """
    codes = label_code[label_code >= 0]
    return tuple(int(c) for c in np.bincount(codes, minlength=6)[:6])
