"""LangSmith run exports as rollouts (spec: spec/adapters/traces.md, TRACE-LANGSMITH): one trace
is one rollout, its ``run_type = tool`` runs the calls."""

from __future__ import annotations

from .operators import AUDIT_OPERATORS, audit
from .reader import DATASET, read, runs
from .semantics import SEMANTICS, requested, run_span

__all__ = ["AUDIT_OPERATORS", "DATASET", "SEMANTICS", "audit", "read", "requested", "run_span", "runs"]
