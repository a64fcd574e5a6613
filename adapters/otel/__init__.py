"""OpenTelemetry GenAI semantic-convention traces (OTLP JSON Lines, plain or gzip) as rollouts
(spec: spec/adapters/traces.md, TRACE-OTEL): one trace is one rollout, its ``execute_tool``
spans the calls. The OTLP container (:mod:`.otlp`) is shared with the OpenInference adapter."""

from __future__ import annotations

from .forms import otlp_spans
from .operators import AUDIT_OPERATORS, audit
from .reader import DATASET, read
from .semantics import SEMANTICS, interpret, requested_calls, tool_definitions

__all__ = [
    "AUDIT_OPERATORS",
    "DATASET",
    "SEMANTICS",
    "audit",
    "interpret",
    "otlp_spans",
    "read",
    "requested_calls",
    "tool_definitions",
]
