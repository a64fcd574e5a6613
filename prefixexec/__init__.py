"""prefixexec: the reference scorer for prefix executability of tool-using agents.

The public API re-exports the kernel (equations and replay), the adapters registry and the
record reader; see README.md and spec/SPEC.md. Every name but ``__version__`` is imported on
first use (PEP 562): ``import prefixexec`` loads nothing else, ``import prefixexec.kernel`` (the
minimal kernel: numpy and attrs) loads no adapter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prefixexec._version import __version__


def _checkout_path(package_path: list[str]) -> list[str]:
    """API-CHECKOUT: imported from a checkout's ``prefixexec/`` folder (the current directory
    shadows any installed copy), ``prefixexec.kernel``, ``.adapters`` and ``.vectors`` live in
    the sibling folders ``kernel/``, ``adapters/`` and ``spec/vectors/``, as pyproject's
    package-dir maps them: search the checkout root and ``spec/`` too. An installed package
    (kernel inside it) is left as it is."""
    import os

    here = package_path[0] if package_path else ""
    root = os.path.dirname(os.path.abspath(here))
    if os.path.isfile(os.path.join(here, "kernel", "__init__.py")) or not os.path.isfile(
        os.path.join(root, "kernel", "__init__.py")
    ):
        return package_path
    extra = [root, os.path.join(root, "spec")]
    return package_path + [p for p in extra if p not in package_path]


__path__ = _checkout_path(list(__path__))

if TYPE_CHECKING:
    from prefixexec.adapters import ADAPTERS, InputError
    from prefixexec.adapters.records import read_records
    from prefixexec.api import (
        BootstrapResult,
        Condition,
        Scores,
        auc_pec,
        auc_pec_area,
        bootstrap,
        decomposition,
        mean_fed,
        metrics,
        n_k,
        pec,
        pec_curve,
        pec_elig,
        pec_elig_curve,
        read,
        recovered,
        rr,
        rr_eligible,
        score,
        success,
        ter,
    )
    from prefixexec.calls import (
        ArgumentError,
        ReportResult,
        Result,
        audit,
        command_options,
        compare,
        convert,
        leaderboard,
        sample,
    )
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
        PrefixMonitor,
        Rejected,
        Rollout,
        Semantics,
        ToolCall,
        Verdict,
        compute_metrics,
        first_error_depth,
        group_by_condition,
        label_counts,
        parse_label,
        primary_label,
        replay,
    )

#: The kernel's names re-exported here, imported on first use: ``import prefixexec`` (as for
#: ``prefixexec --version``) loads neither numpy nor the kernel.
_KERNEL_NAMES = frozenset(
    (
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
    )
)


#: The Python API (prefixexec/api.py, spec/api.md): score, metrics, bootstrap, read, and the
#: estimators taking any array-like (they replace the kernel's array-only ones here, API-ARRAYS).
_API_NAMES = frozenset(
    (
        "BootstrapResult",
        "Condition",
        "Scores",
        "auc_pec",
        "auc_pec_area",
        "bootstrap",
        "decomposition",
        "mean_fed",
        "metrics",
        "n_k",
        "pec",
        "pec_curve",
        "pec_elig",
        "pec_elig_curve",
        "read",
        "recovered",
        "rr",
        "rr_eligible",
        "score",
        "success",
        "ter",
    )
)


#: One function per command (prefixexec/calls.py, API-COMMANDS), with its result types.
_CALL_NAMES = frozenset(
    (
        "ArgumentError",
        "Result",
        "ReportResult",
        "audit",
        "command_options",
        "compare",
        "convert",
        "leaderboard",
        "sample",
    )
)
#: Commands whose name is also a module of this package: the module is callable (prefixexec/_callable.py).
_MODULE_COMMANDS = frozenset(("audit_table", "conformance", "crosscheck", "demo", "explain", "report"))


def __getattr__(name: str) -> Any:
    """The kernel and adapter-side names, imported when first asked for (PEP 562)."""
    if name in _CALL_NAMES:
        import prefixexec.calls as calls

        return getattr(calls, name)
    if name in _MODULE_COMMANDS:
        import importlib

        return importlib.import_module(f"prefixexec.{name}")
    if name in _API_NAMES:
        import prefixexec.api as api

        return getattr(api, name)
    if name in _KERNEL_NAMES:
        import prefixexec.kernel as kernel

        return getattr(kernel, name)
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
    "ArgumentError",
    "BootstrapResult",
    "Cohort",
    "Condition",
    "ConditionKey",
    "ConditionMetrics",
    "Decomposition",
    "InputError",
    "Label",
    "NoToolAction",
    "Outcome",
    "PrefixMonitor",
    "Rejected",
    "ReportResult",
    "Result",
    "Rollout",
    "Scores",
    "Semantics",
    "ToolCall",
    "Verdict",
    "__version__",
    "auc_pec",
    "auc_pec_area",
    "audit",
    "audit_table",
    "bootstrap",
    "command_options",
    "compare",
    "compute_metrics",
    "conformance",
    "convert",
    "crosscheck",
    "decomposition",
    "demo",
    "explain",
    "first_error_depth",
    "group_by_condition",
    "label_counts",
    "leaderboard",
    "mean_fed",
    "metrics",
    "n_k",
    "parse_label",
    "pec",
    "pec_curve",
    "pec_elig",
    "pec_elig_curve",
    "primary_label",
    "read",
    "read_records",
    "recovered",
    "replay",
    "report",
    "rr",
    "rr_eligible",
    "sample",
    "score",
    "success",
    "ter",
]
