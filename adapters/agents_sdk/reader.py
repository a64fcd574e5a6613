"""The OpenAI Agents SDK's trace export (``JsonlTraceProcessor`` JSONL) -> rollouts, one per trace
(TRACE-AGENTS-FILE)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prefixexec.kernel import Rollout

from ..errors import InputError
from ..spans import Span, decode_line, input_lines, read_traces, trace_options
from .semantics import span_of, trace_root

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET = "agents"
EXPECTED = "a JSONL file of Agents SDK trace and span exports"


def sdk_spans(paths: Sequence[str], keys: frozenset[str]) -> Iterator[Span]:
    """Every trace and span line of ``paths`` (``{"object": "trace"}`` / ``{"object": "trace.span"}``)."""
    for path in paths:
        for where, line in input_lines(path, EXPECTED):
            record = decode_line(where, line)
            kind = record.get("object") if isinstance(record, dict) else None
            if kind == "trace.span":
                yield span_of(where, record, keys)
            elif kind == "trace":
                yield trace_root(where, record, keys)
            else:
                raise InputError(
                    where,
                    "expected an Agents SDK export: a JSON object with 'object' = 'trace' or 'trace.span'",
                )


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read the SDK's exported spans; each trace is one rollout."""
    settings = trace_options(options, "agents")
    return read_traces(sdk_spans(paths, settings.keys), settings, DATASET, paths)
