"""OpenTelemetry GenAI traces in OTLP JSON Lines (plain or gzip) -> rollouts, one per trace (TRACE-OTEL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from prefixexec.kernel import Rollout

from ..spans import read_traces, trace_options
from .forms import otlp_spans
from .semantics import READS, interpret

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET = "otel"


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read OTLP JSON Lines files of GenAI spans; each trace is one rollout."""
    settings = trace_options(options, "otel")
    return read_traces(
        otlp_spans(paths, interpret(settings.keys), READS | settings.keys), settings, DATASET, paths
    )
