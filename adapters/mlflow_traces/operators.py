"""The trace audit for MLflow traces (AUDIT-TRACES): see :func:`adapters.spans.audit_traces`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..spans import AUDIT_OPERATORS, audit_traces
from .reader import trace_spans

if TYPE_CHECKING:
    from .. import AdapterOptions
    from ..audit import GenericAuditReport


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter mlflow FILE...``."""
    return audit_traces(paths, options, "mlflow", lambda keys: trace_spans(paths, keys))


__all__ = ["AUDIT_OPERATORS", "audit"]
