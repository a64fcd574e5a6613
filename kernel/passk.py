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
