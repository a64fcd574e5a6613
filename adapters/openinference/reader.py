"""OpenInference traces in OTLP JSON Lines (plain or gzip) -> rollouts, one per trace (TRACE-OI)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from prefixexec.kernel import Rollout

from ..otel.forms import otlp_spans
from ..spans import read_traces, trace_options
from .semantics import interpret

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET = "openinference"


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read OTLP JSON Lines files of OpenInference spans; each trace is one rollout."""
    settings = trace_options(options, "openinference")
    return read_traces(otlp_spans(paths, interpret(settings.keys)), settings, DATASET, paths)
