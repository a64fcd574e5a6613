"""Benchmark: reading OTLP JSON Lines traces (``--adapter otel``) against orjson parsing the same bytes.

The input is the real trace file tests/data/traces/agents-otel-genai.jsonl (written by the
OpenTelemetry SDK's file exporter from the OpenAI Agents SDK, see its SOURCE.md) copied
``--copies`` times, each copy with its own trace and span ids (the hex ids are rewritten) and its
own tool call ids and order ids (``call_lookup_0_0`` -> ``call_0007_lookup_0_0``, ``ORD-1001`` ->
``ORD-0007-1001``, in every text that holds them), so no text of one copy is a text of another
(no cache of parsed arguments or messages can help across copies) while the spans, attributes
and their sizes stay the real ones.

In one run, alternating ``--repeat`` times (best of each is compared):

* the floor: reading the file line by line and parsing every line with ``orjson.loads``
  (nothing else);
* prefixexec: ``ADAPTERS["otel"].read`` -- every span decoded and interpreted, traces checked
  (ids, cycles), calls ordered, replayed, one rollout per trace -- what ``prefixexec score
  --adapter otel`` does before scoring;

and prints spans per second of each and the ratio prefixexec / floor (the issue's target: within
3x). ``--big-trace N`` also reads one trace of N spans (N / 10 tool calls, the rest model spans)
and prints its time and the process's peak memory (a bounded answer for a trace of a million
spans: TRACE-STRUCTURE).

Usage: python benchmarks/otlp_traces.py [--copies 400] [--repeat 3] [--big-trace 1000000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from prefixexec.adapters import ADAPTERS, AdapterOptions

SOURCE = Path(__file__).resolve().parent.parent / "tests" / "data" / "traces" / "agents-otel-genai.jsonl"
HEX = re.compile(r'"(traceId|spanId|parentSpanId)":"([0-9a-f]+)"')
#: The start of a tool call id or an order id, wherever it is written (attributes, messages, errors).
IDS = re.compile(r"\b(ORD|call)([-_])")


def copies(path: Path, n: int) -> int:
    """Write ``n`` copies of the real file, each with new ids; the number of spans written."""
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    spans = 0
    with path.open("w", encoding="utf-8") as out:
        for copy in range(n):

            def fresh(match: re.Match[str], copy: int = copy) -> str:
                value = match.group(2)
                return f'"{match.group(1)}":"{copy:08x}{value[8:]}"'

            def own(match: re.Match[str], copy: int = copy) -> str:
                return f"{match.group(1)}{match.group(2)}{copy:04d}{match.group(2)}"

            for line in lines:
                out.write(IDS.sub(own, HEX.sub(fresh, line)) + "\n")
                spans += line.count('"spanId"')
    return spans


def big_trace(path: Path, n: int) -> None:
    """One trace of ``n`` spans: every tenth an ``execute_tool`` span, the rest ``chat`` spans."""
    trace = "ab" * 16

    def attribute(key: str, value: str) -> dict[str, object]:
        return {"key": key, "value": {"stringValue": value}}

    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            tool = i % 10 == 9
            attrs = (
                [attribute("gen_ai.operation.name", "execute_tool"), attribute("gen_ai.tool.name", "lookup")]
                if tool
                else [attribute("gen_ai.operation.name", "chat"), attribute("gen_ai.request.model", "m")]
            )
            span = {
                "traceId": trace,
                "spanId": f"{i + 1:016x}",
                "parentSpanId": "" if i == 0 else f"{1:016x}",
                "name": "execute_tool lookup" if tool else "chat m",
                "startTimeUnixNano": str(1_000_000 + i),
                "endTimeUnixNano": str(1_000_001 + i),
                "attributes": attrs,
                "status": {"code": 1},
            }
            document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
            out.write(json.dumps(document, separators=(",", ":")) + "\n")


def floor(path: Path) -> None:
    with path.open("rb") as handle:
        for line in handle:
            orjson.loads(line)


def spans_only(path: Path) -> None:
    """The reader alone: every span decoded and interpreted (no traces, no replay)."""
    from prefixexec.adapters.otel.forms import otlp_spans
    from prefixexec.adapters.otel.semantics import interpret
    from prefixexec.adapters.records import _collector_paused

    with _collector_paused():
        for _ in otlp_spans([str(path)], interpret(frozenset({"success"}))):
            pass


def ours(path: Path) -> None:
    ADAPTERS["otel"].read([str(path)], AdapterOptions(extra={"success_attr": "@ok"}))


def timed(fn: Callable[[Path], None], path: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(path)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-trace", type=int, default=0, metavar="N")
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = Path(folder) / "traces.jsonl"
        spans = copies(path, args.copies)
        size = path.stat().st_size
        print(f"input: {args.copies} copies of {SOURCE.name}: {spans} spans, {size / 1e6:.1f} MB")
        runs = {"orjson": floor, "spans": spans_only, "prefixexec": ours}
        walls: dict[str, list[float]] = {name: [] for name in runs}
        cpus: dict[str, list[float]] = {name: [] for name in runs}
        ours(path)  # imports and caches once, outside the timings
        for _ in range(args.repeat):
            for name, fn in runs.items():
                wall, cpu = timed(fn, path)
                walls[name].append(wall)
                cpus[name].append(cpu)
        labels = {
            "orjson": "orjson.loads per line (the floor)",
            "spans": "prefixexec reader: spans only",
            "prefixexec": "prefixexec --adapter otel, rollouts",
        }
        for name, label in labels.items():
            wall = min(walls[name])
            print(f"{label:38} {wall:.3f} s wall  {min(cpus[name]):.3f} s CPU  {spans / wall:,.0f} spans/s")
        for name in ("spans", "prefixexec"):
            print(
                f"ratio {name} / orjson: {min(walls[name]) / min(walls['orjson']):.2f}x wall, "
                f"{min(cpus[name]) / min(cpus['orjson']):.2f}x CPU (target: within 3x)"
            )
        if args.big_trace:
            big = Path(folder) / "big.jsonl"
            big_trace(big, args.big_trace)
            start = time.perf_counter()
            rollouts = ADAPTERS["otel"].read([str(big)], AdapterOptions(extra={"success_attr": "@ok"}))
            took = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            (rollout,) = rollouts
            print(
                f"one trace of {args.big_trace} spans: {took:.1f} s, T = {rollout.outcome.T}, "
                f"FED = {rollout.outcome.fed}, peak memory {peak:.0f} MiB"
            )


if __name__ == "__main__":
    main()
