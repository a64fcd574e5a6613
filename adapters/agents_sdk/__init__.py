"""The OpenAI Agents SDK's own traces, written by ``prefixexec.integrations.agents.JsonlTraceProcessor``,
as rollouts (spec: spec/adapters/traces.md, TRACE-AGENTS): one trace is one rollout, its
``function`` spans the calls."""

from __future__ import annotations

from .operators import AUDIT_OPERATORS, audit
from .reader import DATASET, read, sdk_spans
from .semantics import SEMANTICS, span_of, trace_root

__all__ = ["AUDIT_OPERATORS", "DATASET", "SEMANTICS", "audit", "read", "sdk_spans", "span_of", "trace_root"]
