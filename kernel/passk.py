"""pass^k over repeated trials (tau-bench, tau2), exact."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction


def pass_hat_k(n: Sequence[int], c: Sequence[int], k: int) -> Fraction:
    """per task C(c,k)/C(n,k) averaged over tasks (tau2 agent_metrics.pass_hat_k)"""
    if len(n) != len(c) or not n:
        raise ValueError(f"'n' and 'c' must be non-empty and of one length: {len(n)}, {len(c)}")
    if k < 1:
        raise ValueError(f"'k' must be >= 1: {k}")
    total = Fraction(0)
    for trials, successes in zip(n, c, strict=True):
        if not 0 <= successes <= trials or trials < k:
            raise ValueError(f"need 0 <= c <= n and n >= k: n={trials}, c={successes}, k={k}")
        total += Fraction(math.comb(successes, k), math.comb(trials, k))
    return total / len(n)
