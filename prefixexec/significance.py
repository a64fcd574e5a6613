"""Exact tests for paired binary outcomes and multiplicity adjustment (spec: CMP-MCNEMAR, CMP-HOLM).

The exact McNemar test is the two-sided binomial test of the discordant pairs: of the ``n = b + c``
tasks on which two systems disagree, ``b`` favour the treatment; under "no difference" ``b`` is
Binomial(n, 1/2), and ``p = min(1, 2 P(X <= min(b, c)))`` (McNemar 1947; the exact form is the
sign test on the discordant pairs, e.g. Agresti, *Categorical Data Analysis*, 3rd ed., 11.1). It
is what ``scipy.stats.binomtest(b, n, 0.5)`` and ``statsmodels.stats.contingency_tables.mcnemar(
table, exact=True)`` compute; here it is an exact rational. Holm's step-down adjustment (Holm 1979)
controls the family-wise error rate over several comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

#: Above this many discordant pairs the p-value is computed in floating point (log space); the
#: exact rational's numerator and denominator would have thousands of digits.
EXACT_LIMIT = 20_000


def mcnemar_exact(b: int, c: int) -> Fraction:
    """The exact two-sided McNemar p-value of ``b`` and ``c`` discordant pairs, as a Fraction.

    ``p = min(1, 2 sum_{i <= min(b, c)} C(n, i) / 2^n)`` with ``n = b + c``; 1 when ``n = 0``.
    """
    _check_counts(b, c)
    n = b + c
    if n > EXACT_LIMIT:
        raise ValueError(f"{n} discordant pairs: beyond {EXACT_LIMIT}, use mcnemar_p")
    if n == 0:
        return Fraction(1)
    m = min(b, c)
    term, tail = 1, 1  # C(n, 0)
    for i in range(m):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def mcnemar_p(b: int, c: int) -> tuple[float, Fraction | None]:
    """``(p, exact)``: the exact McNemar p-value as a float and, up to :data:`EXACT_LIMIT`
    discordant pairs, as a Fraction (``None`` beyond: the float then comes from log-space sums)."""
    _check_counts(b, c)
    if b + c <= EXACT_LIMIT:
        exact = mcnemar_exact(b, c)
        return float(exact), exact
    n, m = b + c, min(b, c)
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(m + 1)]
    top = max(logs)
    log_tail = top + math.log(math.fsum(math.exp(x - top) for x in logs)) - n * math.log(2)
    return min(1.0, 2 * math.exp(log_tail)), None


def _check_counts(b: int, c: int) -> None:
    for name, value in (("b", b), ("c", c)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name!r} must be an integer >= 0: {value!r}")


def holm(p_values: Sequence[Fraction | float | None]) -> list[Fraction | float | None]:
    """Holm's step-down adjusted p-values, in the order given; ``None`` entries are not tests.

    With the m defined p-values sorted ascending, ``p_(i)`` becomes
    ``max_{j <= i} min(1, (m - j + 1) p_(j))``; ties keep their input order. Fractions stay exact.
    """
    defined = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: list[Fraction | float | None] = [None] * len(p_values)
    m = len(defined)
    running: Fraction | float = 0
    for rank, (p, i) in enumerate(defined):
        scaled = min(type(p)(1), (m - rank) * p)
        running = max(running, scaled)
        out[i] = running
    return out


__all__ = ["EXACT_LIMIT", "holm", "mcnemar_exact", "mcnemar_p"]
