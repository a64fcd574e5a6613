"""A deliberately naive, loop-by-loop transcription of Eq. (1)-(12) (INV-NAIVE).

It shares no code with the kernel: plain Python lists and fractions, one loop per sum, written
to be read next to the paper, not to be fast.
"""

from __future__ import annotations

from fractions import Fraction

Triple = tuple[int, int, bool]  # (T_i, FED_i, Y_i)


def fed_of(verdicts: list[bool]) -> int:
    """Eq. (1): the first k whose prefix is not executable, else T + 1."""
    T = len(verdicts)
    for k in range(1, T + 1):
        prefix_ok = True
        for t in range(1, k + 1):
            if not verdicts[t - 1]:
                prefix_ok = False
        if not prefix_ok:
            return k
    return T + 1


def pec(rollouts: list[Triple], k: int) -> Fraction:
    """Eq. (4)."""
    total = 0
    for T, fed, _ in rollouts:
        if T >= k and fed > k:
            total += 1
    return Fraction(total, len(rollouts))


def n_k(rollouts: list[Triple], k: int) -> int:
    """Eq. (5)."""
    total = 0
    for T, _, _ in rollouts:
        if T >= k:
            total += 1
    return total


def pec_elig(rollouts: list[Triple], k: int) -> Fraction | None:
    """Eq. (6)."""
    n = n_k(rollouts, k)
    if n == 0:
        return None
    total = 0
    for T, fed, _ in rollouts:
        if T >= k and fed > k:
            total += 1
    return Fraction(total, n)


def ter(rollouts: list[Triple]) -> Fraction:
    """Eq. (8)."""
    total = 0
    for T, fed, _ in rollouts:
        if fed == T + 1:
            total += 1
    return Fraction(total, len(rollouts))


def rr_eligible(rollouts: list[Triple]) -> int:
    """Denominator of Eq. (9)."""
    total = 0
    for T, fed, _ in rollouts:
        if fed <= T:
            total += 1
    return total


def rr(rollouts: list[Triple]) -> Fraction | None:
    """Eq. (9)."""
    num = 0
    for T, fed, y in rollouts:
        if y and fed <= T:
            num += 1
    den = rr_eligible(rollouts)
    return None if den == 0 else Fraction(num, den)


def auc_pec(rollouts: list[Triple]) -> Fraction:
    """Eq. (10), left form: the per-rollout normalised sum of survival indicators."""
    total = Fraction(0)
    for T, fed, _ in rollouts:
        area = 0
        for k in range(1, T + 1):
            if fed > k:
                area += 1
        total += Fraction(area, T)
    return total / len(rollouts)


def mean_fed(rollouts: list[Triple]) -> Fraction:
    total = 0
    for _, fed, _ in rollouts:
        total += fed
    return Fraction(total, len(rollouts))


def success(rollouts: list[Triple]) -> Fraction:
    total = 0
    for _, _, y in rollouts:
        if y:
            total += 1
    return Fraction(total, len(rollouts))


def s_given_executable(rollouts: list[Triple]) -> Fraction | None:
    """s = Pr(Y = 1 | FED = T + 1) of Eq. (12)."""
    num = den = 0
    for T, fed, y in rollouts:
        if fed == T + 1:
            den += 1
            if y:
                num += 1
    return None if den == 0 else Fraction(num, den)
