"""Hypothesis properties of the kernel: one law per test, each citing its spec ID."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.kernel import (
    Cohort,
    auc_pec,
    auc_pec_area,
    compute_metrics,
    decomposition,
    first_error_depth,
    label_counts,
    mean_fed,
    n_k,
    pec,
    pec_curve,
    pec_elig,
    pec_elig_curve,
    rr,
    rr_eligible,
    success,
    ter,
)
from prefixexec.kernel.estimators import eligible_counts, survival_counts

import naive
from strategies import MAX_T, cohorts, common_horizon_cohorts, verdict_sequences


def _triples(c: Cohort) -> list[tuple[int, int, bool]]:
    return [(int(t), int(f), bool(y)) for t, f, y in zip(c.T, c.fed, c.Y, strict=True)]


@pytest.mark.spec("EQ-1", "EQ-2")
@given(verdict_sequences)
def test_fed_from_verdicts_and_eq2(verdicts: list[bool]) -> None:
    fed = first_error_depth(verdicts)
    # Eq. (2): prefix k executable (all of v_1..v_k accepted) iff FED > k, for every k <= T.
    assert all((fed > k) == all(verdicts[:k]) for k in range(1, len(verdicts) + 1))


@pytest.mark.spec("EQ-1", "INV-NAIVE")
@given(verdict_sequences)
def test_fed_agrees_with_naive(verdicts: list[bool]) -> None:
    assert first_error_depth(verdicts) == naive.fed_of(verdicts)


@pytest.mark.spec("INV-PEC-MONO", "EQ-4")
@given(cohorts())
def test_pec_non_increasing_in_unit_interval(c: Cohort) -> None:
    curve = [pec(c.fed, k) for k in range(0, int(c.T.max()) + 3)]
    assert all(1 >= a >= b >= 0 for a, b in itertools.pairwise(curve))


@pytest.mark.spec("INV-PEC-ZERO", "CONV-NO-CENSORING")
@given(cohorts(), st.integers(1, 10))
def test_pec_zero_beyond_max_T(c: Cohort, extra: int) -> None:
    assert pec(c.fed, int(c.T.max()) + extra) == 0


@pytest.mark.spec("EQ-7", "EQ-5", "EQ-6")
@given(cohorts(), st.integers(1, MAX_T + 2))
def test_eq7_support_decomposition(c: Cohort, k: int) -> None:
    nk = n_k(c.T, k)
    elig = pec_elig(c.T, c.fed, k)
    assert (elig is None) == (nk == 0)
    if elig is not None:
        assert pec(c.fed, k) == Fraction(nk, c.N) * elig


@pytest.mark.spec("INV-TER-AUC")
@given(cohorts())
def test_ter_le_auc_le_1(c: Cohort) -> None:
    assert 0 <= ter(c.T, c.fed) <= auc_pec(c.T, c.fed) <= 1


@pytest.mark.spec("INV-RR-ELIG", "EQ-9")
@given(cohorts())
def test_rr_eligible_complement(c: Cohort) -> None:
    assert rr_eligible(c.T, c.fed) == c.N * (1 - ter(c.T, c.fed))


@pytest.mark.spec("EQ-10", "EQ-11")
@given(cohorts())
def test_eq10_both_forms_agree(c: Cohort) -> None:
    assert auc_pec(c.T, c.fed) == auc_pec_area(c.T, c.fed)


@pytest.mark.spec("INV-TER-HORIZON", "EQ-8")
@given(common_horizon_cohorts())
def test_ter_equals_pec_at_common_horizon(data: tuple[int, Cohort]) -> None:
    T0, c = data
    assert ter(c.T, c.fed) == pec(c.fed, T0)


@pytest.mark.spec("EQ-12")
@given(cohorts())
def test_eq12_decomposition(c: Cohort) -> None:
    d = decomposition(c.T, c.fed, c.Y)
    if 0 < d.q < 1:
        assert d.s is not None and d.r is not None
        assert success(c.Y) == d.q * d.s + (1 - d.q) * d.r


@pytest.mark.spec("EQ-12")
@given(cohorts())
def test_successes_split_into_uninterrupted_and_recovered(c: Cohort) -> None:
    d = decomposition(c.T, c.fed, c.Y)
    assert d.uninterrupted + d.recovered == int(np.count_nonzero(c.Y))


@pytest.mark.spec("INV-PERM", "REC-UNIQUE")
@given(cohorts(), st.randoms(use_true_random=False))
def test_metrics_invariant_under_permutation(c: Cohort, rnd: random.Random) -> None:
    order = list(range(c.N))
    rnd.shuffle(order)
    shuffled = Cohort(
        T=c.T[order],
        fed=c.fed[order],
        Y=c.Y[order],
        label_code=c.label_code[order],
        task=[c.task[i] for i in order],
    )
    assert compute_metrics(shuffled) == compute_metrics(c)


@pytest.mark.spec("INV-ADDITIVE")
@given(cohorts(), cohorts())
def test_counts_additive_under_concatenation(a: Cohort, b: Cohort) -> None:
    both = Cohort(
        T=np.concatenate([a.T, b.T]),
        fed=np.concatenate([a.fed, b.fed]),
        Y=np.concatenate([a.Y, b.Y]),
        label_code=np.concatenate([a.label_code, b.label_code]),
        task=[*a.task, *b.task],
    )
    width = int(both.T.max())

    def counts(c: Cohort) -> list[int]:
        surv = np.zeros(width, dtype=np.int64)
        surv[: int(c.T.max())] = survival_counts(c.T, c.fed)
        elig = np.zeros(width, dtype=np.int64)
        elig[: int(c.T.max())] = eligible_counts(c.T)
        m = compute_metrics(c)
        return [
            c.N,
            *surv.tolist(),
            *elig.tolist(),
            m.decomposition.fully_executable,
            m.RR_eligible,
            m.recovered,
            int(c.fed.sum()),
            *label_counts(c.label_code),
        ]

    assert counts(both) == [x + y for x, y in zip(counts(a), counts(b), strict=True)]


@pytest.mark.spec("INV-LABEL-SUM", "MET-LABELS", "CONV-LABEL-ORDER")
@given(cohorts())
def test_label_counts_sum_to_rr_eligible(c: Cohort) -> None:
    assert sum(label_counts(c.label_code)) == rr_eligible(c.T, c.fed)


@pytest.mark.spec("INV-NAIVE", "EQ-4", "EQ-5", "EQ-6", "EQ-8", "EQ-9", "EQ-11", "MET-MEAN-FED", "MET-SUCCESS")
@given(cohorts())
def test_kernel_agrees_with_naive_transcription(c: Cohort) -> None:
    rows = _triples(c)
    ks = range(1, int(c.T.max()) + 1)
    assert (
        pec_curve(c.T, c.fed),
        pec_elig_curve(c.T, c.fed),
        tuple(int(x) for x in eligible_counts(c.T)),
        ter(c.T, c.fed),
        rr(c.T, c.fed, c.Y),
        rr_eligible(c.T, c.fed),
        auc_pec(c.T, c.fed),
        mean_fed(c.fed),
        success(c.Y),
        decomposition(c.T, c.fed, c.Y).s,
    ) == (
        tuple(naive.pec(rows, k) for k in ks),
        tuple(naive.pec_elig(rows, k) for k in ks),
        tuple(naive.n_k(rows, k) for k in ks),
        naive.ter(rows),
        naive.rr(rows),
        naive.rr_eligible(rows),
        naive.auc_pec(rows),
        naive.mean_fed(rows),
        naive.success(rows),
        naive.s_given_executable(rows),
    )


@pytest.mark.spec("INV-IMMUTABLE")
@given(cohorts())
def test_estimators_do_not_mutate_and_arrays_are_read_only(c: Cohort) -> None:
    before = (c.T.copy(), c.fed.copy(), c.Y.copy(), c.label_code.copy())
    compute_metrics(c)
    after = (c.T, c.fed, c.Y, c.label_code)
    assert all(np.array_equal(x, y) for x, y in zip(before, after, strict=True)) and not any(
        a.flags.writeable for a in after
    )


@pytest.mark.spec("CONV-UNDEFINED", "EQ-9")
@given(cohorts(max_n=5, max_t=2))
def test_rr_undefined_iff_no_eligible(c: Cohort) -> None:
    assert (rr(c.T, c.fed, c.Y) is None) == (rr_eligible(c.T, c.fed) == 0)
