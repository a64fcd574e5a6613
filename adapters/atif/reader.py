"""ATIF trajectories (one JSON document per file, pretty or compact, or one per line) -> rollouts,
one per trajectory (TRACE-ATIF)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prefixexec.kernel import Rollout

from ..spans import Span, json_documents, read_traces, trace_options
from .semantics import trajectory

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET = "atif"
EXPECTED = "an ATIF trajectory (JSON with 'schema_version' and 'steps')"


def trajectory_spans(paths: Sequence[str], keys: frozenset[str]) -> Iterator[Span]:
    """Every span of every trajectory in ``paths``."""
    for path in paths:
        for where, value in json_documents(path, EXPECTED):
            yield from trajectory(where, value, keys)


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read ATIF trajectories; each trajectory is one rollout."""
    settings = trace_options(options, "atif")
    return read_traces(trajectory_spans(paths, settings.keys), settings, DATASET, paths)
