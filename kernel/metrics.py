"""All point estimates of one condition, exact (spec: CONV-EXACT, MET-*)."""

from __future__ import annotations

from fractions import Fraction

import attrs

from . import estimators as est
from .actions import LABEL_KEYS
from .cohort import Cohort


@attrs.frozen(slots=True)
class ConditionMetrics:
    """The paper's metrics for one cohort; counts are ints, ratios exact Fractions."""

    N: int
    TER: Fraction
    AUC_PEC: Fraction
    mean_FED: Fraction
    success: Fraction
    RR: Fraction | None
    RR_eligible: int
    recovered: int
    PEC: tuple[Fraction, ...]
    PEC_elig: tuple[Fraction | None, ...]
    n_k: tuple[int, ...]
    labels: tuple[tuple[str, int], ...]
    decomposition: est.Decomposition

    @property
    def label_counts(self) -> dict[str, int]:
        """Label name -> count, in tie-break order, then ``unlabelled``."""
        return dict(self.labels)


def compute_metrics(cohort: Cohort) -> ConditionMetrics:
    """Every point estimate of Eq. (3)-(12) for ``cohort``."""
    T, fed, Y = cohort.T, cohort.fed, cohort.Y
    return ConditionMetrics(
        N=cohort.N,
        TER=est.ter(T, fed),
        AUC_PEC=est.auc_pec(T, fed),
        mean_FED=est.mean_fed(fed),
        success=est.success(Y),
        RR=est.rr(T, fed, Y),
        RR_eligible=est.rr_eligible(T, fed),
        recovered=est.recovered(T, fed, Y),
        PEC=est.pec_curve(T, fed),
        PEC_elig=est.pec_elig_curve(T, fed),
        n_k=tuple(int(x) for x in est.eligible_counts(T)),
        labels=tuple(zip(LABEL_KEYS, est.label_counts(cohort.label_code), strict=True)),
        decomposition=est.decomposition(T, fed, Y),
    )
