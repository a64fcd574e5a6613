"""pass^k, pass@k, TER^k and TER@k of the kernel (spec/passk.md: PASSK-*)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.kernel import Cohort, compute_metrics
from prefixexec.kernel.bootstrap import resample_counts
from prefixexec.kernel.passk import (
    max_k,
    pass_at_k,
    pass_hat_k,
    replicates,
    task_columns,
    task_pass_at_k,
    task_pass_hat_k,
    ter_at_k,
    ter_hat_k,
    trials_per_task,
)

from strategies import equal_trial_cohorts, trial_counts


def _by_task(cohort: Cohort) -> tuple[list[int], list[int], list[int]]:
    """(n_j, successes_j, fully executable_j) per task, counted from the cohort's arrays."""
    tasks = sorted(set(cohort.task))
    n = [sum(1 for t in cohort.task if t == task) for task in tasks]
    c = [int(sum(bool(y) for t, y in zip(cohort.task, cohort.Y, strict=True) if t == task)) for task in tasks]
    e = [
        int(
            sum(
                int(f) == int(h) + 1
                for t, h, f in zip(cohort.task, cohort.T, cohort.fed, strict=True)
                if t == task
            )
        )
        for task in tasks
    ]
    return n, c, e


@pytest.mark.spec("PASSK-HAT", "PASSK-AT")
def test_hand_computed_example() -> None:
    # Two tasks: 4 trials with 2 successes, 3 trials with 3. pass^2 = (C(2,2)/C(4,2) + 1) / 2
    # = (1/6 + 1) / 2 = 7/12; pass@2 = ((1 - C(2,2)/C(4,2)) + 1) / 2 = (5/6 + 1) / 2 = 11/12.
    assert task_pass_hat_k([4, 3], [2, 3], 2) == (Fraction(1, 6), Fraction(1))
    assert pass_hat_k([4, 3], [2, 3], 2) == Fraction(7, 12)
    assert task_pass_at_k([4, 3], [2, 3], 2) == (Fraction(5, 6), Fraction(1))
    assert pass_at_k([4, 3], [2, 3], 2) == Fraction(11, 12)
    # k = 3: C(2,3) = 0, so the first task contributes 0 to pass^3 and 1 to pass@3.
    assert pass_hat_k([4, 3], [2, 3], 3) == Fraction(1, 2)
    assert pass_at_k([4, 3], [2, 3], 3) == Fraction(1)


@pytest.mark.spec("PASSK-HAT")
@pytest.mark.parametrize(
    ("n", "c", "k", "what"),
    [
        ([4, 2], [1, 1], 3, "task 1: number of trials 2 is less than k 3"),
        ([4], [5], 1, "task 0: 'c' must be in [0, n] = [0, 4]: 5"),
        ([4], [-1], 1, "task 0: 'c' must be in"),
        ([], [], 1, "at least one task"),
        ([4], [1, 2], 1, "'n' has 1 tasks, 'c' has 2"),
        ([4], [1], 0, "'k' must be an integer >= 1: 0"),
        ([4], [1], True, "'k' must be an integer >= 1: True"),
    ],
)
def test_bad_counts_are_refused(n: list[int], c: list[int], k: int, what: str) -> None:
    with pytest.raises(ValueError, match=what.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        pass_hat_k(n, c, k)


@pytest.mark.spec("PASSK-MONO", "PASSK-HAT")
@given(trial_counts())
def test_pass_hat_k_non_increasing_in_k(counts: tuple[list[int], list[int]]) -> None:
    n, c = counts
    values = [pass_hat_k(n, c, k) for k in range(1, max_k(n) + 1)]
    assert all(a >= b for a, b in itertools.pairwise(values))


@pytest.mark.spec("PASSK-MONO", "PASSK-AT")
@given(trial_counts())
def test_pass_at_k_non_decreasing_in_k(counts: tuple[list[int], list[int]]) -> None:
    n, c = counts
    values = [pass_at_k(n, c, k) for k in range(1, max_k(n) + 1)]
    assert all(a <= b for a, b in itertools.pairwise(values))


@pytest.mark.spec("PASSK-MONO", "PASSK-TER")
@given(equal_trial_cohorts())
def test_ter_hat_k_and_ter_at_k_monotone(data: tuple[int, Cohort]) -> None:
    n, cohort = data
    ns, _, e = _by_task(cohort)
    hats = [ter_hat_k(ns, e, k) for k in range(1, n + 1)]
    ats = [ter_at_k(ns, e, k) for k in range(1, n + 1)]
    assert all(a >= b for a, b in itertools.pairwise(hats)) and all(
        a <= b for a, b in itertools.pairwise(ats)
    )


@pytest.mark.spec("PASSK-HAT", "PASSK-AT")
@given(trial_counts(), st.data())
def test_pass_hat_k_at_most_pass_at_k(counts: tuple[list[int], list[int]], data: st.DataObject) -> None:
    n, c = counts
    k = data.draw(st.integers(1, max_k(n)))
    assert pass_hat_k(n, c, k) <= pass_at_k(n, c, k)


@pytest.mark.spec("PASSK-K1")
@given(trial_counts())
def test_pass_at_1_is_pass_hat_1(counts: tuple[list[int], list[int]]) -> None:
    n, c = counts
    assert (
        pass_at_k(n, c, 1)
        == pass_hat_k(n, c, 1)
        == sum((Fraction(cj, nj) for nj, cj in zip(n, c, strict=True)), Fraction(0)) / len(n)
    )


@pytest.mark.spec("PASSK-K1", "MET-SUCCESS")
@given(equal_trial_cohorts())
def test_pass_hat_1_is_success_with_equal_trials(data: tuple[int, Cohort]) -> None:
    _, cohort = data
    n, c, _ = _by_task(cohort)
    assert pass_hat_k(n, c, 1) == compute_metrics(cohort).success


@pytest.mark.spec("PASSK-K1", "EQ-8", "PASSK-TER")
@given(equal_trial_cohorts())
def test_ter_hat_1_is_ter_with_equal_trials(data: tuple[int, Cohort]) -> None:
    _, cohort = data
    n, _, e = _by_task(cohort)
    assert ter_hat_k(n, e, 1) == compute_metrics(cohort).TER


@pytest.mark.spec("PASSK-K1")
def test_pass_hat_1_weighs_tasks_not_rollouts() -> None:
    # Unequal trials: task a 1/1, task b 0/3. pass^1 = (1 + 0)/2 = 1/2; success = 1/4.
    assert pass_hat_k([1, 3], [1, 0], 1) == Fraction(1, 2)


@pytest.mark.spec("PASSK-TRIALS")
def test_trial_conventions() -> None:
    # tau2: each task's own count; run (tau-bench v1): the run's distinct trial numbers for all.
    assert trials_per_task([4, 3, 4], 4, "tau2") == (4, 3, 4)
    assert trials_per_task([4, 3, 4], 4, "run") == (4, 4, 4)
    assert max_k((4, 3, 4)) == 3
    # Under "run", a task with 3 of 4 trials and 3 successes has pass^3 = C(3,3)/C(4,3) = 1/4,
    # under tau2 1.
    assert pass_hat_k([4], [3], 3) == Fraction(1, 4) and pass_hat_k([3], [3], 3) == 1
    with pytest.raises(ValueError, match="more trials than the run's 2"):
        trials_per_task([3], 2, "run")
    with pytest.raises(ValueError, match="'convention' must be one of tau2, run"):
        trials_per_task([3], 3, "v1")  # type: ignore[arg-type]  # a wrong value on purpose


@pytest.mark.spec("PASSK-BOOT")
@given(trial_counts(), st.data(), st.booleans())
def test_task_columns_reproduce_the_point_estimate(
    counts: tuple[list[int], list[int]], data: st.DataObject, at_least_one: bool
) -> None:
    n, c = counts
    k = data.draw(st.integers(1, max_k(n)))
    num, den = task_columns(n, c, k, at_least_one)
    per_task = (task_pass_at_k if at_least_one else task_pass_hat_k)(n, c, k)  # math.comb per task
    expected = sum(per_task, Fraction(0)) / len(per_task)
    assert (pass_at_k if at_least_one else pass_hat_k)(n, c, k) == expected
    assert Fraction(int(sum(int(x) for x in num)), int(sum(int(x) for x in den))) == expected


@pytest.mark.spec("PASSK-BOOT", "BOOT-REPLICATE", "BOOT-CLUSTER")
@given(trial_counts(), st.integers(0, 2**32 - 1), st.booleans())
def test_replicates_are_weighted_task_means(
    counts: tuple[list[int], list[int]], seed: int, at_least_one: bool
) -> None:
    n, c = counts
    k = max_k(n)
    W = resample_counts(len(n), 5, seed)
    num, den = task_columns(n, c, k, at_least_one)
    per_task = (task_pass_at_k if at_least_one else task_pass_hat_k)(n, c, k)
    expected = [
        float(sum((int(w) * v for w, v in zip(row, per_task, strict=True)), Fraction(0)) / int(row.sum()))
        for row in W
    ]
    assert replicates(W, [(num, den)])[0].tolist() == expected


@pytest.mark.spec("PASSK-BOOT")
def test_huge_binomials_stay_exact() -> None:
    # C(200, 100) > 2^62: the columns fall back to Python integers and the replicate is still
    # the ratio rounded once.
    n, c = [200, 199], [150, 120]
    num, den = task_columns(n, c, 100, False)
    assert num.dtype == object
    W = np.array([[2, 0], [1, 1]], dtype=np.int64)
    got = replicates(W, [(num, den), task_columns(n, c, 1, True)])[0]
    first = Fraction(math.comb(150, 100), math.comb(200, 100))
    both = (first + Fraction(math.comb(120, 100), math.comb(199, 100))) / 2
    assert got.tolist() == [float(first), float(both)]
