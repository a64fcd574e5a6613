"""OpenInference (Arize) traces in OTLP JSON Lines as rollouts (spec: spec/adapters/traces.md,
TRACE-OI): one trace is one rollout, its ``TOOL`` spans the calls."""

from __future__ import annotations

from .operators import AUDIT_OPERATORS, audit
from .reader import DATASET, read
from .semantics import SEMANTICS, interpret, offered, requested

__all__ = ["AUDIT_OPERATORS", "DATASET", "SEMANTICS", "audit", "interpret", "offered", "read", "requested"]
