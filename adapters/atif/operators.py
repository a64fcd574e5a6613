"""The trace audit for ATIF trajectories (AUDIT-TRACES): see :func:`adapters.spans.audit_traces`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..spans import AUDIT_OPERATORS, audit_traces
from .reader import trajectory_spans

if TYPE_CHECKING:
    from .. import AdapterOptions
    from ..audit import GenericAuditReport


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter atif FILE...``."""
    return audit_traces(paths, options, "atif", lambda keys: trajectory_spans(paths, keys))


__all__ = ["AUDIT_OPERATORS", "audit"]
