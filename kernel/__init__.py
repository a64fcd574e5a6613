"""The prefixexec kernel: the paper's equations and prefix replay (numpy and attrs only).

Nothing here imports adapters, the CLI or any benchmark package.
"""

from .actions import (
    LABEL_KEYS,
    LABEL_ORDER,
    NO_TOOL,
    UNLABELLED,
    Action,
    Label,
    NoToolAction,
    ToolCall,
    parse_label,
    primary_label,
)
from .cohort import Cohort, ConditionKey, Rollout, group_by_condition
from .estimators import (
    Decomposition,
    auc_pec,
    auc_pec_area,
    decomposition,
    label_counts,
    mean_fed,
    n_k,
    pec,
    pec_curve,
    pec_elig,
    pec_elig_curve,
    recovered,
    rr,
    rr_eligible,
    success,
    ter,
)
from .metrics import ConditionMetrics, compute_metrics
from .monitor import PrefixMonitor, Verdict
from .replay import Accepted, Outcome, Rejected, Semantics, first_error_depth, replay

__all__ = [
    "LABEL_KEYS",
    "LABEL_ORDER",
    "NO_TOOL",
    "UNLABELLED",
    "Accepted",
    "Action",
    "Cohort",
    "ConditionKey",
    "ConditionMetrics",
    "Decomposition",
    "Label",
    "NoToolAction",
    "Outcome",
    "PrefixMonitor",
    "Rejected",
    "Rollout",
    "Semantics",
    "ToolCall",
    "Verdict",
    "auc_pec",
    "auc_pec_area",
    "compute_metrics",
    "decomposition",
    "first_error_depth",
    "group_by_condition",
    "label_counts",
    "mean_fed",
    "n_k",
    "parse_label",
    "pec",
    "pec_curve",
    "pec_elig",
    "pec_elig_curve",
    "primary_label",
    "recovered",
    "replay",
    "rr",
    "rr_eligible",
    "success",
    "ter",
]
