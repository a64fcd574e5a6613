"""LangSmith run exports (JSONL of runs, or a JSON list of runs) -> rollouts, one per trace
(TRACE-LANGSMITH)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prefixexec.kernel import Rollout

from ..errors import InputError
from ..spans import Span, decode_line, input_lines, read_traces, trace_options
from .semantics import run_span

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET = "langsmith"
EXPECTED = "a LangSmith run export (JSONL of runs)"


def runs(paths: Sequence[str], keys: frozenset[str]) -> Iterator[Span]:
    """Every run of ``paths``: one JSON object per line, or a line holding a JSON list of runs."""
    for path in paths:
        for where, line in input_lines(path, EXPECTED):
            value = decode_line(where, line)
            records = value if isinstance(value, list) else [value]
            for index, record in enumerate(records):
                here = where if not isinstance(value, list) else f"{where}: [{index}]"
                if not isinstance(record, dict) or "run_type" not in record:
                    raise InputError(here, "expected a LangSmith run: a JSON object with 'run_type'")
                yield run_span(here, record, keys)


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read LangSmith runs; each trace is one rollout."""
    settings = trace_options(options, "langsmith")
    return read_traces(runs(paths, settings.keys), settings, DATASET, paths)
