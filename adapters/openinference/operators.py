"""The trace audit for OpenInference files (AUDIT-TRACES): see :func:`adapters.spans.audit_traces`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..otel.forms import otlp_spans
from ..spans import AUDIT_OPERATORS, audit_traces
from .semantics import interpret

if TYPE_CHECKING:
    from .. import AdapterOptions
    from ..audit import GenericAuditReport


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter openinference FILE...``."""
    return audit_traces(paths, options, "openinference", lambda keys: otlp_spans(paths, interpret(keys)))


__all__ = ["AUDIT_OPERATORS", "audit"]
