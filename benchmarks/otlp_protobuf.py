"""Benchmark: reading OTLP protobuf traces (``--adapter otel``) against the protobuf library's own
``ExportTraceServiceRequest.FromString`` over the same bytes.

The input is benchmarks/otlp_traces.py's: the real trace file
tests/data/traces/agents-otel-genai.jsonl copied ``--copies`` times, each copy with its own ids;
each line (one OTLP JSON request) is converted to the protobuf message with the library's
``json_format.ParseDict`` (the hex ids as bytes), and written as the Collector's file exporter
writes (each message after its size, 4 bytes big-endian) and as one single request.

In one run, alternating ``--repeat`` times (best of each is compared):

* the floor: ``ExportTraceServiceRequest.FromString`` of every message of the file (reading the
  file's bytes and its 4-byte sizes included; no field is read: the upb backend makes the Python
  objects of the fields only when they are read);
* the floor that reads: the same, and then every span's ids, name, times and each attribute's key
  and value (``WhichOneof``, ``getattr``) read once into a dict -- the least a reader of the spans
  does in Python;
* prefixexec: ``ADAPTERS["otel"].read`` of the file -- every span decoded and interpreted,
  traces checked, calls ordered, replayed, one rollout per trace.

It prints spans per second of each and the ratios prefixexec / floor (the issue's target: within
3x of the first) and prefixexec / floor that reads.

Usage: python benchmarks/otlp_protobuf.py [--copies 200] [--repeat 3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefixexec.adapters import ADAPTERS, AdapterOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))

from otlp_traces import copies


def _as_proto_json(value: Any) -> Any:
    """OTLP JSON -> the protobuf JSON mapping: ids are hex in OTLP JSON, base64 in protobuf's."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                out[key] = base64.b64encode(bytes.fromhex(item)).decode("ascii")
            else:
                out[key] = _as_proto_json(item)
        return out
    if isinstance(value, list):
        return [_as_proto_json(v) for v in value]
    return value


def write_protobuf(lines_path: Path, stream_path: Path, single_path: Path) -> None:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    everything = ExportTraceServiceRequest()
    with lines_path.open(encoding="utf-8") as lines, stream_path.open("wb") as out:
        for line in lines:
            message = json_format.ParseDict(_as_proto_json(json.loads(line)), ExportTraceServiceRequest())
            data = message.SerializeToString()
            out.write(len(data).to_bytes(4, "big") + data)
            everything.resource_spans.extend(message.resource_spans)
    single_path.write_bytes(everything.SerializeToString())


def floor(path: Path) -> int:
    """Parse every message of a 4-byte-size stream with the library; the messages parsed."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    parse = ExportTraceServiceRequest.FromString
    count = 0
    with path.open("rb") as handle:
        while size_bytes := handle.read(4):
            parse(handle.read(int.from_bytes(size_bytes, "big")))
            count += 1
    return count


def _read_fields(message: Any) -> int:
    count = 0
    for resource in message.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                fields = (span.trace_id, span.span_id, span.parent_span_id, span.name)
                times = (span.start_time_unix_nano, span.end_time_unix_nano, span.status.code)
                values = {
                    kv.key: getattr(kv.value, kv.value.WhichOneof("value") or "string_value")
                    for kv in span.attributes
                }
                count += len(fields) + len(times) + len(values) > 0
    return count


def floor_reading(path: Path) -> int:
    """:func:`floor`, each message's spans read (:func:`_read_fields`)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    parse = ExportTraceServiceRequest.FromString
    count = 0
    with path.open("rb") as handle:
        if path.name.endswith("-stream.pb"):
            while size_bytes := handle.read(4):
                count += _read_fields(parse(handle.read(int.from_bytes(size_bytes, "big"))))
        else:
            count += _read_fields(parse(handle.read()))
    return count


def floor_single(path: Path) -> int:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    ExportTraceServiceRequest.FromString(path.read_bytes())
    return 1


def ours(path: Path) -> int:
    return len(ADAPTERS["otel"].read([str(path)], AdapterOptions()))


def best(fn: Callable[[Path], int], path: Path, times: list[float]) -> None:
    start = time.perf_counter()
    fn(path)
    times.append(time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        lines = Path(tmp) / "traces.jsonl"
        spans = copies(lines, args.copies)
        stream, single = Path(tmp) / "traces-stream.pb", Path(tmp) / "traces.pb"
        write_protobuf(lines, stream, single)
        print(f"{spans} spans, {args.copies} copies; stream {stream.stat().st_size / 1e6:.1f} MB")
        for name, path, lib in (("stream", stream, floor), ("single", single, floor_single)):
            lib_times: list[float] = []
            reading_times: list[float] = []
            our_times: list[float] = []
            for _ in range(args.repeat):
                best(lib, path, lib_times)
                best(floor_reading, path, reading_times)
                best(ours, path, our_times)
            lib_best, reading_best, our_best = min(lib_times), min(reading_times), min(our_times)
            print(
                f"{name:6}: FromString {lib_best:.3f} s ({spans / lib_best:,.0f} spans/s); "
                f"FromString + fields read {reading_best:.3f} s; "
                f"prefixexec {our_best:.3f} s ({spans / our_best:,.0f} spans/s); "
                f"ratio {our_best / lib_best:.2f}x FromString, "
                f"{our_best / reading_best:.2f}x with fields read"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
