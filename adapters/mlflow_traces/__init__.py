"""MLflow Tracing exports (``Trace.to_json()``) as rollouts (spec: spec/adapters/traces.md,
TRACE-MLFLOW): one trace is one rollout, its ``TOOL`` spans the calls."""

from __future__ import annotations

from .operators import AUDIT_OPERATORS, audit
from .reader import DATASET, read, trace_spans
from .semantics import SEMANTICS, trace_document

__all__ = ["AUDIT_OPERATORS", "DATASET", "SEMANTICS", "audit", "read", "trace_document", "trace_spans"]
