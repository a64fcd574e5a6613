"""Regression: the paper's worked example (section 3.1, BFCL, Llama-4 Maverick, Plan-Conditioned ReAct)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from prefixexec.kernel import Outcome, compute_metrics

from strategies import cohort_of


@pytest.mark.spec("REG-PAPER-EXAMPLE", "EQ-12", "INV-RR-ELIG")
def test_paper_worked_example() -> None:
    # Source: paper section 3.1, "前缀失败之后的成功": 200 rollouts; 10 fully executable, all 10
    # successful; 138 of the 190 with a prefix failure also successful. The horizons are not given
    # in the paper; they do not enter TER, RR or success, so any T >= 1 reproduces the figures
    # (here T = 6 and the failures at depths 1..6 in turn).
    executable = [(Outcome(T=6, fed=7), True)] * 10
    failing = [(Outcome(T=6, fed=1 + i % 6), i < 138) for i in range(190)]
    m = compute_metrics(cohort_of(executable + failing))
    assert m.N == 200
    assert m.TER == Fraction(10, 200) and float(m.TER) == 0.05
    assert m.RR_eligible == 190
    assert m.RR == Fraction(138, 190) and round(float(m.RR), 4) == 0.7263
    assert m.success == Fraction(148, 200) and float(m.success) == 0.74
    d = m.decomposition
    # 138/148 = 93.2% of the successes came after an earlier invalid prefix.
    assert (d.uninterrupted, d.recovered) == (10, 138)
    assert round(100 * d.recovered / (d.uninterrupted + d.recovered), 1) == 93.2
    assert d.s is not None and d.r is not None
    assert d.q * d.s + (1 - d.q) * d.r == m.success
