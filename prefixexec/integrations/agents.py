"""The OpenAI Agents SDK's own trace export, into a file ``prefixexec`` reads (spec: TRACE-AGENTS-FILE).

Add the processor to the SDK's tracing, run the agents, and score the file::

    import agents
    from prefixexec.integrations.agents import JsonlTraceProcessor

    agents.add_trace_processor(JsonlTraceProcessor("traces.jsonl"))
    ...                                   # run agents as usual
    # prefixexec score traces.jsonl      (read by --adapter agents, detected)

The processor writes one JSON line per finished span and per finished trace: exactly the
``export()`` payloads the SDK sends to its own backend (``{"object": "trace.span", "id",
"trace_id", "parent_id", "started_at", "ended_at", "span_data": {...}, "error": {...}}`` and
``{"object": "trace", "id", "workflow_name", "group_id", "metadata"}``). It needs nothing from
``openai-agents`` at import (the SDK calls its six methods; any object with ``export()`` is
written), appends to the file, writes each line whole under a lock (spans end on several
threads) and flushes it at once, so a crash loses at most the span being written.
"""

from __future__ import annotations

import json
import os
import threading
from typing import IO, Any


def _json_default(value: object) -> object:
    """What a span payload holds beyond JSON (a datetime, an enum, a pydantic model): its text."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)


class JsonlTraceProcessor:
    """An Agents SDK ``TracingProcessor`` that appends each finished span and trace to ``path``.

    ``agents.add_trace_processor(JsonlTraceProcessor(path))`` keeps the SDK's other processors;
    ``agents.set_trace_processors([JsonlTraceProcessor(path)])`` makes it the only one (no export
    to the OpenAI backend).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._handle: IO[str] | None = None

    def _write(self, item: Any) -> None:
        export = getattr(item, "export", None)
        payload = export() if callable(export) else None
        if payload is None:  # a disabled span or trace exports nothing
            return
        line = json.dumps(payload, ensure_ascii=False, default=_json_default, separators=(",", ":"))
        with self._lock:
            if self._handle is None:
                self._handle = open(self.path, "a", encoding="utf-8", newline="\n")
            self._handle.write(line + "\n")
            self._handle.flush()

    def on_trace_start(self, trace: Any) -> None:
        """Nothing yet: the trace is written when it ends, with its final metadata."""

    def on_trace_end(self, trace: Any) -> None:
        self._write(trace)

    def on_span_start(self, span: Any) -> None:
        """Nothing yet: the span is written when it ends, with its output and error."""

    def on_span_end(self, span: Any) -> None:
        self._write(span)

    def shutdown(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def force_flush(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.flush()


try:  # registered as a TracingProcessor where the SDK is installed (its isinstance checks pass)
    from agents.tracing import (  # type: ignore[import-not-found,unused-ignore]  # openai-agents: optional (found where installed: the test extra)
        TracingProcessor as _TracingProcessor,
    )
except ImportError:  # the SDK is not installed: the class is used duck-typed
    pass
else:
    _TracingProcessor.register(JsonlTraceProcessor)

__all__ = ["JsonlTraceProcessor"]
