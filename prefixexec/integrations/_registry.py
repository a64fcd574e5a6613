"""inspect_ai's entry point (``[project.entry-points.inspect_ai] prefixexec = ...``): importing
this module registers the ``prefixexec/`` scorer, metrics and approver (INSP-SCORER-REGISTRY)."""

from __future__ import annotations

from .inspect import (
    auc_pec,
    mean_fed,
    pool,
    prefix_executability,
    rr,
    rr_eligible,
    schema_approver,
    ter,
)

__all__ = [
    "auc_pec",
    "mean_fed",
    "pool",
    "prefix_executability",
    "rr",
    "rr_eligible",
    "schema_approver",
    "ter",
]
