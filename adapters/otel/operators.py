"""The trace audit for OpenTelemetry GenAI files (AUDIT-TRACES): see :func:`adapters.spans.audit_traces`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..spans import AUDIT_OPERATORS, audit_traces
from .forms import otlp_spans
from .semantics import READS, interpret

if TYPE_CHECKING:
    from .. import AdapterOptions
    from ..audit import GenericAuditReport


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter otel FILE...``."""
    return audit_traces(paths, options, "otel", lambda keys: otlp_spans(paths, interpret(keys), READS | keys))


__all__ = ["AUDIT_OPERATORS", "audit"]
