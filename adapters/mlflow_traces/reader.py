"""MLflow traces (``Trace.to_json()``: one trace per file, pretty or compact, or one per line; a
JSON list of them) -> rollouts, one per trace (TRACE-MLFLOW)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prefixexec.kernel import Rollout

from ..spans import Span, json_documents, read_traces, trace_options
from .semantics import trace_document

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET = "mlflow"
EXPECTED = "an MLflow trace export (Trace.to_json())"


def trace_spans(paths: Sequence[str], keys: frozenset[str]) -> Iterator[Span]:
    """Every span of every trace in ``paths``."""
    for path in paths:
        for where, value in json_documents(path, EXPECTED):
            records = value if isinstance(value, list) else [value]
            for index, record in enumerate(records):
                yield from trace_document(
                    where if not isinstance(value, list) else f"{where}: [{index}]", record, keys
                )


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read MLflow traces; each trace is one rollout."""
    settings = trace_options(options, "mlflow")
    return read_traces(trace_spans(paths, settings.keys), settings, DATASET, paths)
