"""prefixexec: the reference scorer for prefix executability of tool-using agents.

The public API re-exports the kernel (equations and replay), the adapters registry and the
record reader; see README.md and spec/SPEC.md. The adapters are loaded on first use of
``ADAPTERS``, ``InputError`` or ``read_records``, so that ``import prefixexec.kernel`` (the
minimal kernel: numpy and attrs) does not load them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prefixexec._version import __version__
from prefixexec.kernel import (
    LABEL_KEYS,
    LABEL_ORDER,
    NO_TOOL,
    UNLABELLED,
    Accepted,
    Action,
    Cohort,
    ConditionKey,
    ConditionMetrics,
    Decomposition,
    Label,
    NoToolAction,
    Outcome,
    Rejected,
    Rollout,
    Semantics,
    ToolCall,
    auc_pec,
    auc_pec_area,
    compute_metrics,
    decomposition,
    first_error_depth,
    group_by_condition,
    label_counts,
    mean_fed,
    n_k,
    parse_label,
    pec,
    pec_curve,
    pec_elig,
    pec_elig_curve,
    primary_label,
    recovered,
    replay,
    rr,
    rr_eligible,
    success,
    ter,
)

if TYPE_CHECKING:
    from prefixexec.adapters import ADAPTERS, InputError
    from prefixexec.adapters.records import read_records


def __getattr__(name: str) -> Any:
    """The adapter-side names, imported when first asked for (PEP 562)."""
    if name in ("ADAPTERS", "InputError"):
        import prefixexec.adapters as adapters

        return getattr(adapters, name)
    if name == "read_records":
        from prefixexec.adapters.records import read_records

        return read_records
    raise AttributeError(f"module 'prefixexec' has no attribute {name!r}")


__all__ = [
    "ADAPTERS",
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
    "InputError",
    "Label",
    "NoToolAction",
    "Outcome",
    "Rejected",
    "Rollout",
    "Semantics",
    "ToolCall",
    "__version__",
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
    "read_records",
    "recovered",
    "replay",
    "rr",
    "rr_eligible",
    "success",
    "ter",
]
