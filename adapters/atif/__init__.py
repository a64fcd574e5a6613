"""ATIF trajectories (Harbor's Agent Trajectory Interchange Format) as rollouts (spec:
spec/adapters/traces.md, TRACE-ATIF): one trajectory is one rollout, its tool calls the calls."""

from __future__ import annotations

from .operators import AUDIT_OPERATORS, audit
from .reader import DATASET, read, trajectory_spans
from .semantics import SEMANTICS, trajectory

__all__ = ["AUDIT_OPERATORS", "DATASET", "SEMANTICS", "audit", "read", "trajectory", "trajectory_spans"]
